import { z } from 'zod'
import { mutation, none, ok, query } from '../../panel-frame/op.js'

/** The Settings view's operations, with the brute-force locks it shows (zod only: shared with the renderer). */

const ms = z.number()
const json = z.record(z.string(), z.unknown())

export const settingsIssueSchema = z.object({ path: z.string(), message: z.string() })

export const settingsContract = {
  'settings.get': query(
    'The effective configuration, the stored layer and the keys start-up options override',
    none,
    z.object({
      effective: json,
      stored: json,
      /** Dotted paths whose effective value comes from --config, flags or the environment. */
      overridden: z.array(z.string()),
      /**
       * The same keys, each with what set it (`--config /etc/gatehouse.json`, `GATEHOUSE_RATE_LIMIT`):
       * every view that edits a key shows it read-only with this reason and leaves it out of its saves.
       */
      startup: z.array(z.object({ path: z.string(), source: z.string() })),
      /** Keys that only apply at start-up (changing them needs a restart). */
      restartRequired: z.array(z.string()),
    }),
  ),
  'settings.update': mutation(
    'Validates a partial change with the config schema and applies it live; with `base` (each changed field as the view read it, by dotted path), refused with 409 CONFLICT when another change got there first',
    z.object({ patch: json, base: json.optional() }).strict(),
    z.object({ effective: json, overridden: z.array(z.string()) }),
  ),
  'settings.validate': query(
    'Validates a partial change without applying it',
    z.object({ patch: json }).strict(),
    z.object({ valid: z.boolean(), issues: z.array(settingsIssueSchema) }),
  ),

  // Brute-force locks (docs/SECURITY.md)
  'security.locks': query(
    'Identifiers locked right now by the per-account password throttle',
    none,
    z.object({ locks: z.array(z.object({ key: z.string(), failures: z.number(), lockedUntil: ms })) }),
  ),
  'security.unlock': mutation(
    'Lifts the lock of one identifier (e.g. email:ada@example.com)',
    z.object({ key: z.string().min(1).max(400) }).strict(),
    ok,
  ),
}
