/**
 * Configuration migrations (issue 50 §6): a configuration an earlier release accepted is migrated
 * when it is read, never refused, unless it cannot be honoured safely (then the ConfigError names
 * the release note). Each migration is keyed by the release that changed the meaning of what it
 * rewrites and names its CHANGELOG entry; it recognises the old shape itself (a layer already in
 * the new shape is left alone), so a layer of any earlier release passes through every migration
 * in order. ConfigStore applies them to config.json (rewritten, the original kept as
 * `config.json.<release>.bak`), to `--config` layers (in memory, with a warning: the operator's
 * file is not rewritten) and to the layer PostgreSQL shares; the server logs and audits each one.
 */

type Json = Record<string, unknown>

const isPlainObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export interface ConfigMigration {
  /** The release that changed the meaning of what this rewrites (the CHANGELOG section). */
  release: string
  /** The CHANGELOG entry that says what changed and what to write instead (`CHANGELOG.md#anchor`). */
  note: string
  /** The migrated layer and one line per change, or null when the layer holds nothing of the old shape. */
  apply(layer: Json): { layer: Json; changes: string[] } | null
}

export interface AppliedConfigMigration {
  release: string
  note: string
  changes: string[]
}

/**
 * Forward auth, `subject.teams` (0.5.0): a bare team name without `organizations` read as "a team of
 * that name in any organization", and anyone may create an organization with a team of any name.
 * That reading cannot be honoured safely, and which organization was meant cannot be known; the
 * rule is rewritten to deny (fail closed: nobody gets in who was not meant to, every other rule and
 * face keeps serving), its requirement kept in the backup copy, the log and the audit.
 */
const forwardAuthBareTeams: ConfigMigration = {
  release: '0.6.0',
  note: 'CHANGELOG.md#0.5.0-forward-auth-teams',
  apply(layer) {
    const forwardAuth = layer.forwardAuth
    if (!isPlainObject(forwardAuth) || !Array.isArray(forwardAuth.rules)) return null
    const changes: string[] = []
    const rules = forwardAuth.rules.map((rule: unknown, index) => {
      if (!isPlainObject(rule) || !isPlainObject(rule.subject)) return rule
      const { teams, organizations } = rule.subject
      if (organizations !== undefined || !Array.isArray(teams)) return rule
      const bare = teams.filter((t): t is string => typeof t === 'string' && !t.includes('/'))
      if (bare.length === 0) return rule
      const { subject: _dropped, ...rest } = rule
      changes.push(
        `forwardAuth.rules[${index}] (${String(rule.domain)}): subject.teams ${JSON.stringify(bare)} names no organization; the rule now denies (was policy ${JSON.stringify(rule.policy)}, subject ${JSON.stringify(rule.subject)}): write "organization-slug/team" to let that team in`,
      )
      return { ...rest, policy: 'deny' }
    })
    if (changes.length === 0) return null
    return { layer: { ...layer, forwardAuth: { ...forwardAuth, rules } }, changes }
  },
}

/** Every configuration migration, oldest release first. */
export const configMigrations: readonly ConfigMigration[] = [forwardAuthBareTeams]

/** Applies every migration in order; `applied` names each one that changed something. */
export function migrateConfig(
  layer: Json,
  migrations: readonly ConfigMigration[] = configMigrations,
): { layer: Json; applied: AppliedConfigMigration[] } {
  let current = layer
  const applied: AppliedConfigMigration[] = []
  for (const migration of migrations) {
    const result = migration.apply(current)
    if (!result) continue
    current = result.layer
    applied.push({ release: migration.release, note: migration.note, changes: result.changes })
  }
  return { layer: current, applied }
}
