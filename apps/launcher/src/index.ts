/**
 * The launcher behind `npm start` ({@link launchStack}) and the entries of the services it
 * starts ({@link entryOf}), which the end-to-end tests start the same way.
 */
export { entryOf, ENTRIES, type EntryName } from './entries.ts';
export {
  startClusterTopology,
  type ClusterTopology,
  type ClusterTopologyOptions,
} from './cluster-topology.ts';
export { launchStack, type LaunchOptions } from './launch-stack.ts';
export { startDataServices, type DataServices, type DataServicesOptions } from './stack-data.ts';
