export * from './fakeDriver';
export * from './fakePlanner';
