import { RESTART_ONLY_KEYS } from '../../config/store.js'
import { leafPaths } from '../../config/startup.js'
import { bindListeners, configProblems } from '../../config-checks.js'
import { ListenerRefusal } from '../../feature.js'
import { holdsSecret, isSecretPath, withoutSecrets } from '../../config/secret-paths.js'
import { refuseConflicts, refuseStartupKeys } from '../../panel-frame/errors.js'
import type { PanelEnv } from '../../panel-frame/env.js'
import { settingsError } from './errors.js'

type Json = Record<string, unknown>
type Issue = { path: string; message: string }

/** Keys read once when the server starts (a reload keeps them too). */
export const RESTART_REQUIRED: string[] = [...RESTART_ONLY_KEYS]

export { withoutSecrets } from '../../config/secret-paths.js'

/** The Settings view: the config store's merge and schema, applied live. */
export const settingsPanel = (env: PanelEnv) => {
  const store = env.gatehouse.config

  /** The keys start-up options (--config, flags, environment) set, with their sources; secrets are set in their own views. */
  const startup = () => store.startupKeys().filter((k) => !isSecretPath(k.path))

  const check = async (patch: Json): Promise<Issue[]> => {
    // Saved, it would not take effect (and the answer would claim it did): a start-up option wins.
    refuseStartupKeys(startup(), patch, holdsSecret)
    for (const path of leafPaths(patch, '', true)) {
      if (holdsSecret(path)) throw settingsError.secretNotEditableHere(path)
      if (RESTART_REQUIRED.some((key) => path === key || path.startsWith(`${key}.`))) throw settingsError.restartRequired(path)
    }
    // The same merge and schema as the change itself (ConfigStore.update).
    const issues = store.problems(patch)
    if (issues.length > 0) return issues
    // Then what the schema cannot see: the base URL and the cookie domain, roles and organizations.
    const next = store.candidate(patch)
    return next ? await configProblems(env.gatehouse.ctx, next) : []
  }

  return {
    'settings.get'() {
      return {
        effective: withoutSecrets(env.gatehouse.ctx.config() as Json),
        stored: withoutSecrets(store.storedLayer()),
        overridden: startup().map((k) => k.path),
        startup: startup(),
        restartRequired: RESTART_REQUIRED,
      }
    },

    async 'settings.validate'({ patch }: { patch: Json }) {
      const issues = await check(patch)
      return { valid: issues.length === 0, issues }
    },

    async 'settings.update'({ patch, base }: { patch: Json; base?: Json }) {
      // Only what this admin changed, and only over what they saw: another admin's change since is
      // never silently put back by a stale view.
      await refuseConflicts(env.gatehouse.ctx, patch, base)
      const issues = await check(patch)
      if (issues.length > 0) throw settingsError.invalidConfig(issues)
      // A new LDAP, LDAPS or metrics address is bound before anything is stored: one that cannot be
      // is refused with the reason, and the listeners running keep serving (issue 50).
      const candidate = store.candidate(patch)
      let bound: Awaited<ReturnType<typeof bindListeners>> | undefined
      try {
        bound = candidate ? await bindListeners(env.gatehouse.ctx, candidate) : undefined
      } catch (error) {
        if (error instanceof ListenerRefusal) throw settingsError.listenerNotBound(error.field, error.message)
        throw error
      }
      // ConfigStore validates again, writes the file atomically and notifies listeners: live (the
      // change adopts what was bound above).
      let next: ReturnType<typeof store.update>
      try {
        next = store.update(patch)
      } finally {
        // Queued after the change the update told the listeners of: a no-op once it adopted them,
        // else (the update refused, or changed nothing they listen for) they are closed.
        await bound?.release()
      }
      // On PostgreSQL, written for the other instances before the answer leaves.
      await store.flushed()
      return { effective: withoutSecrets(next as Json), overridden: startup().map((k) => k.path) }
    },
  }
}
