import './base.css';
import './contracts.css';
