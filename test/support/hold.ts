/**
 * A handler's hold: a task that must still be running when the test looks (past a lease, past a
 * wait) waits for the test to let it go instead of sleeping a time meant to be long enough.
 */
export interface Hold {
  /** Resolves once {@link Hold.release} is called. */
  wait: Promise<void>;
  /** Lets every handler waiting on this hold go on; later calls do nothing. */
  release: () => void;
}

/** A new, unreleased {@link Hold}. */
export function hold(): Hold {
  let release = () => {};
  const wait = new Promise<void>((resolve) => (release = resolve));
  return { wait, release };
}
