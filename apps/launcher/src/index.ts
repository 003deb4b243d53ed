/**
 * The launcher behind `npm start` ({@link launchStack}) and the entries of the services it
 * starts ({@link entryOf}), which the end-to-end tests start the same way.
 */
export { launchStack } from './launch-stack.ts';
export { entryOf, ENTRIES, type EntryName } from './entries.ts';
export { startDataServices, type DataServices, type DataServicesOptions } from './stack-data.ts';
