export * from './common';
export * from './xml';
export * from './bccAnswers';
export * from './bcc';
export * from './v1';
export * from './detect';
