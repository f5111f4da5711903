import './base.css';
import './contracts.css';
import './attempts.css';
import './keep.css';
