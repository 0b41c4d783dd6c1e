/**
 * `npm run check:deps`: no import cycles at all, type-only imports included (a type cycle is still two
 * modules that cannot be understood apart; issue 26),
 * and features import core, never each other except through what they declare.
 */
const { readFileSync } = require('node:fs')
const { join } = require('node:path')

/**
 * What each feature imports of another, each with why: the features' dependencies.ts `dependsOn`,
 * gathered by bin/gen-features.js (npm test runs it first). A target is `folder/file.ts` or a whole
 * `folder`.
 */
const declared = JSON.parse(readFileSync(join(__dirname, 'server/features/dependencies.json'), 'utf8'))
const regexOf = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const allowed = (target) => (target.includes('/') ? `^server/features/${regexOf(target)}$` : `^server/features/${regexOf(target)}/`)

/** One rule per feature that declares dependencies: its folder may import exactly those of other features. */
const declaredDependencyRules = Object.entries(declared).map(([folder, targets]) => ({
  name: `${folder}-imports-only-its-dependencies-ts`,
  severity: 'error',
  comment: `Declared in server/features/${folder}/dependencies.ts: ${Object.entries(targets)
    .map(([target, why]) => `${target} (${why})`)
    .join('; ')}. Nothing else of another feature.`,
  from: { path: `^server/features/${regexOf(folder)}/` },
  to: { path: '^server/features/[^/]+/', pathNot: [`^server/features/${regexOf(folder)}/`, ...Object.keys(targets).map(allowed)] },
}))

module.exports = {
  forbidden: [
    {
      name: 'lower-floors-import-no-feature',
      severity: 'error',
      comment:
        "Arrows point down in fact (issue 39): db/, config/, core/, http/, mail/, crypto/, secondary-storage/, log.ts and secret.ts import no feature folder, no aggregation of the features (server/features/*.ts: the list, the generated tables, columns, sections and contracts), no composition module (gatehouse.ts, main.ts, cli*.ts, config-schema.ts, schema.ts, gen-pg-schema.ts, routes.ts) and nothing of server/panel/. The composition root imports the aggregations and hands them down: the config schema through config/schema.ts's provideConfigSchema and WholeConfig, the tables through db/schema.ts's provideTables and db/tables.ts's DatabaseSchema (and the new-user defaults of the features' columns through core/user-defaults.ts), the routes through http/routes/index.ts routesOf(features), the features through features-of.ts.",
      from: {
        path: '^server/(db|config|core|http|mail|crypto|secondary-storage)/|^server/(log|secret)\\.ts$',
      },
      to: {
        path: '^server/features/|^server/(gatehouse|main|cli|cli-user|config-schema|schema|gen-pg-schema|routes)\\.ts$|^server/panel/',
      },
    },
    {
      name: 'lower-floors-reach-no-feature',
      severity: 'error',
      comment:
        'The same, through any chain of imports (type imports counted): nothing a lower floor loads, however indirectly, is a feature folder, an aggregation of the features or a composition module. The feature frame (feature.ts) names PanelEnv from panel/panel-env.ts, which leaves out the panel contracts every feature declares.',
      from: {
        path: '^server/(db|config|core|http|mail|crypto|secondary-storage)/|^server/(log|secret)\\.ts$',
      },
      to: {
        path: '^server/features/|^server/(gatehouse|main|cli|cli-user|config-schema|schema|gen-pg-schema|routes)\\.ts$',
        reachable: true,
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: modules that need each other to load.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'features-without-dependencies-ts-stay-apart',
      severity: 'error',
      comment:
        'A feature folder with no dependencies.ts imports core and framework modules, never another feature (those with one: the rules built from it, below).',
      from: {
        path: '^server/features/([^/]+)/',
        pathNot: Object.keys(declared).map((folder) => `^server/features/${regexOf(folder)}/`),
      },
      to: { path: '^server/features/([^/]+)/', pathNot: ['^server/features/$1/'] },
    },
    ...declaredDependencyRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
    exclude: { path: ['^node_modules', '^out', '^dist'] },
  },
}
