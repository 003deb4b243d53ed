/** The one stream the router floor's server writes every task to (trimmed between runs). */
export const ROUTER_FLOOR_STREAM = 'router-floor:tasks';
