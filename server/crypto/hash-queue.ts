/**
 * Password hashing is the one expensive thing an auth server does (scrypt: ~130 ms and 32 MiB a
 * hash). Hashes run at most `concurrency` at a time (libuv's thread pool has 4 threads, which also
 * serve file I/O), and at most `maxPending` more may wait: beyond that a request is refused at once
 * instead of queueing for minutes, so an overload degrades into fast 503s, not timeouts.
 */
export class HashQueueFullError extends Error {
  constructor() {
    super('password hashing queue is full')
    this.name = 'HashQueueFullError'
  }
}

export class HashQueue {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    private readonly concurrency: number,
    public maxPending: number,
  ) {}

  get pending(): number {
    return this.waiting.length
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.maxPending) throw new HashQueueFullError()
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}

/** One queue per process: there is one thread pool per process. */
export const passwordHashQueue = new HashQueue(4, 64)
