// Restarts run one at a time. A request made while a restart is running is queued; any
// further requests made meanwhile join that queued one (three quick clicks give at most two
// restarts, never two overlapping ones). Every caller's promise settles when a restart that
// began after its request has finished.

export class RestartQueue {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly restart: () => Promise<void>) {}

  /** True while a restart runs or waits. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  request(): Promise<void> {
    if (!this.running) {
      this.running = this.runOnce();
      return this.running;
    }
    if (!this.queued) {
      const current = this.running;
      this.queued = current
        .catch(() => undefined) // a failed restart must not block the next one
        .then(() => {
          this.queued = undefined;
          this.running = this.runOnce();
          return this.running;
        });
    }
    return this.queued;
  }

  private async runOnce(): Promise<void> {
    try {
      await this.restart();
    } finally {
      // Only clear if no queued restart has taken over in the meantime.
      if (!this.queued) this.running = undefined;
    }
  }
}
