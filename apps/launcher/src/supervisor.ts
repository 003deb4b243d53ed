import type { ServiceProcess } from '@agent-reach/process-kit';
import { describeExitStatus, RestartPolicy, type RestartPolicyOptions } from './restart-policy.ts';

/** Anything the launcher started, as it sees it. */
export type Child = Pick<
  ServiceProcess,
  'name' | 'pid' | 'exited' | 'exitSignal' | 'stop' | 'kill'
>;

/** How to start a Node service again: what it was started with. */
export interface RestartSpec {
  entry: string;
  env: Record<string, string>;
  /** Command-line arguments after the entry (the demo endpoints' `--kind … --port …`). */
  args?: readonly string[];
}

/** What {@link Supervisor} needs from the launcher. */
export interface SupervisorOptions {
  /** Prints a status line. */
  say: (line: string) => void;
  /** True once the stack is up: only then is a failed service restarted. */
  running: () => boolean;
  /** True once everything is being stopped: exits are expected then. */
  stopping: () => boolean;
  /** Stops everything with this exit code. */
  stop: (code: number) => void;
  /** `--cluster`: the instances nginx covers for, which are left stopped. */
  survivable: (name: string) => boolean;
  /** Starts a Node service (again). */
  spawn: (name: string, spec: RestartSpec) => Promise<Child>;
  /** Records a (re)started service's pid. */
  recordPid: (child: Child, spec: RestartSpec) => Promise<void>;
  /** The crash-loop rule. @default 5 exits within 60 s */
  policy?: RestartPolicyOptions;
}

/**
 * Watches what the launcher started and answers an exit it did not ask for (docs/OPERATIONS.md,
 * "Crashes and restarts"): once the stack runs, a Node process that fails (the router,
 * registry-sync, an agent, a relay, a demo endpoint) is started again at once, as Compose and Kubernetes would, until its
 * failures make a crash loop ({@link RestartPolicy}); anything else that exits — Redis, InfluxDB,
 * nginx, or any process while the stack is starting, when a restart would repeat a wrong setting
 * or a taken port — stops everything.
 */
export class Supervisor {
  /** In start order (a restarted service keeps its place): stopped in reverse. */
  readonly children: Child[] = [];
  private readonly policy: RestartPolicy;
  private readonly specs = new Map<string, RestartSpec>();
  private readonly restarts = new Set<Promise<void>>();

  constructor(private readonly opts: SupervisorOptions) {
    this.policy = new RestartPolicy(opts.policy);
  }

  /** Watches `child`; with `spec`, a Node service that is restarted when it fails. */
  watch(child: Child, spec?: RestartSpec): void {
    if (spec) this.specs.set(child.name, spec);
    this.children.push(child);
    this.onExit(child);
  }

  /** Resolves once no restart is under way, so that a stop also stops the new process. */
  async settled(): Promise<void> {
    await Promise.all(this.restarts);
  }

  private onExit(child: Child): void {
    const { say } = this.opts;
    void child.exited.then((code) => {
      if (this.opts.stopping()) return;
      const status = { code, signal: child.exitSignal() };
      const it = `${child.name} (pid ${child.pid}) ${describeExitStatus(status)}`;
      if (this.opts.survivable(child.name)) {
        say(`${it}; nginx sends its requests to the others`);
        return;
      }
      const spec = this.specs.get(child.name);
      if (!this.opts.running() || !spec) {
        say(`${it}, unexpectedly; stopping the rest`);
        this.opts.stop(1);
        return;
      }
      const decision = this.policy.decide(child.name, status);
      if (decision.action === 'leave') {
        say(`${it}, on its own; not restarting it`);
      } else if (decision.action === 'crash-loop') {
        const window = `${this.policy.windowMs / 1000} s`;
        say(
          `${it}: ${decision.exits} exits in ${window}, a crash loop; stopping everything (its output is above)`,
        );
        this.opts.stop(1);
      } else {
        say(`${it}; restarting ${this.policy.describe(decision.exits)}`);
        this.restart(child, spec);
      }
    });
  }

  private restart(old: Child, spec: RestartSpec): void {
    const restarting = (async () => {
      const child = await this.opts.spawn(old.name, spec);
      const at = this.children.indexOf(old);
      if (at < 0) this.children.push(child);
      else this.children[at] = child;
      this.onExit(child);
      await this.opts.recordPid(child, spec);
      this.opts.say(`${child.name} restarted (pid ${child.pid})`);
    })().catch((err: unknown) => {
      this.opts.say(
        `restarting ${old.name} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
      this.opts.stop(1);
    });
    this.restarts.add(restarting);
    void restarting.finally(() => this.restarts.delete(restarting));
  }
}
