import './base.css';
import './contracts.css';
import './keep.css';
