import type { Logger } from '../log.js'

/** A set of listeners a feature opens besides the HTTP one (LDAP and LDAPS, metrics'), closed as one. */
export interface ListenerSet {
  close(): Promise<void>
}

/** What a feature tells its ListenerSwitch: how its settings read and how its listeners open. */
export interface ListenerSwitchHooks<Conf, Listeners extends ListenerSet> {
  /** The configuration in effect now (read when a queued change runs, not when it was asked for). */
  inEffect(): Conf
  /** The listener settings `conf` asks for, as a key (null: off); a change of it opens the listeners again. */
  wantedOf(conf: Conf): string | null
  /** Binds what `conf` asks for (it may take over `running`); rejects with the reason it cannot. */
  open(conf: Conf, running: Listeners | null): Promise<Listeners>
  /** Whether a set bound by a save can still serve when its change comes (default: yes). */
  stillBound?(set: Listeners): boolean
  /** `next` serves from now on (null: none); called before the set it replaces closes. */
  serving(next: Listeners | null): void
  /** Said after a live change's refusal in the log while the old listeners keep serving. */
  keptServing: string
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * The listeners of one feature's start hook, applied live (issue 50 §2) the same way for LDAP and
 * metrics: changes run one at a time; a new set is bound before the old one closes, so a change that
 * cannot be bound leaves the old listeners serving; the panel's save binds first (`bindForSave`) and
 * the change it stores next takes over what it bound instead of binding again.
 */
export class ListenerSwitch<Conf, Listeners extends ListenerSet> {
  /** The set that serves, under the settings it was opened with. */
  private current: { settings: string; set: Listeners } | null = null
  /** Bound by a save (`bindForSave`), for the change it stores next. */
  private pending: { settings: string; set: Listeners } | null = null
  private applying: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly hooks: ListenerSwitchHooks<Conf, Listeners>,
    private readonly logger: Logger,
  ) {}

  /** The set serving now, if any. */
  get running(): Listeners | null {
    return this.current?.set ?? null
  }

  /** Opens the listeners `conf` asks for at start (undefined when off); rejects when they cannot be bound. */
  start(conf: Conf): Promise<Listeners> | undefined {
    const settings = this.hooks.wantedOf(conf)
    if (!settings) return undefined
    return this.queue(async () => {
      const set = await this.hooks.open(conf, null)
      await this.switchTo({ settings, set })
      return set
    })
  }

  /** A live change (the panel, another instance's, a reload): open, move or close; a refusal goes to the log. */
  apply(): void {
    void this.queue(async () => {
      const conf = this.hooks.inEffect()
      const wanted = this.hooks.wantedOf(conf)
      if (wanted === (this.current?.settings ?? null)) return this.dropPending()
      if (!wanted) {
        await this.dropPending()
        return this.switchTo(null)
      }
      const next = this.takePending(wanted) ?? (await this.bindOrKeep(conf))
      if (next) await this.switchTo({ settings: wanted, set: next })
    })
  }

  /**
   * Binds what a configuration about to be saved asks for, refused with the reason when it cannot:
   * only what the save changes (a listener that failed under the settings in effect is not the save's to refuse).
   */
  bindForSave(next: Conf): Promise<{ release(): Promise<void> } | undefined> {
    return this.queue(async () => {
      const wanted = this.hooks.wantedOf(next)
      await this.dropPending()
      if (!wanted || wanted === this.current?.settings || wanted === this.hooks.wantedOf(this.hooks.inEffect())) return undefined
      const set = await this.hooks.open(next, this.running)
      this.pending = { settings: wanted, set }
      return {
        release: () =>
          this.queue(async () => {
            if (this.pending?.set === set) await this.dropPending()
          }),
      }
    })
  }

  /** Closes every listener, once the change under way is done. */
  async stop(): Promise<void> {
    await this.applying
    await this.dropPending()
    await this.switchTo(null)
  }

  /** Runs `step` after the ones queued before it. */
  private queue<T>(step: () => Promise<T>): Promise<T> {
    const done = this.applying.then(step)
    this.applying = done.catch(() => undefined)
    return done
  }

  /** What the save bound for the `wanted` settings, if it can still serve. */
  private takePending(wanted: string): Listeners | null {
    const bound = this.pending?.settings === wanted ? this.pending.set : null
    if (!bound || (this.hooks.stillBound && !this.hooks.stillBound(bound))) return null
    this.pending = null
    return bound
  }

  /** Binds `conf` now, the old listeners serving until it is; null (and the reason logged) when it cannot be bound. */
  private async bindOrKeep(conf: Conf): Promise<Listeners | null> {
    await this.dropPending()
    try {
      return await this.hooks.open(conf, this.running)
    } catch (error) {
      this.logger.error(`${messageOf(error)}${this.current ? ` ${this.hooks.keptServing}` : ''}`)
      return null
    }
  }

  /** Makes `next` the serving set (null: none), then closes the one it replaces. */
  private async switchTo(next: { settings: string; set: Listeners } | null): Promise<void> {
    const old = this.current
    this.current = next
    this.hooks.serving(next?.set ?? null)
    await old?.set.close()
  }

  private async dropPending(): Promise<void> {
    const dropped = this.pending
    this.pending = null
    await dropped?.set.close()
  }
}
