/**
 * bin/gen-features.js on a scratch tree: a new capability is its folder plus its line in
 * server/features/index.ts; the columns, tables, config sections and panel operations it declares
 * reach the four aggregations without another edit, in the list's order, and a folder that is not
 * listed contributes nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
// @ts-expect-error: a plain JavaScript build script without declarations
import { generatedFiles, listedFolders } from '../../bin/gen-features.js'

const root = mkdtempSync(join(tmpdir(), 'gatehouse-gen-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function write(path: string, text: string) {
  mkdirSync(join(root, path, '..'), { recursive: true })
  writeFileSync(join(root, path), text)
}

const list = (names: string[]) =>
  [
    "import type { Feature } from '../feature.js'",
    ...names.map((n) => `import { ${n}Feature } from './${n === 'rateCard' ? 'rate-card' : n}/index.js'`),
    '',
    'export const features: Feature[] = [',
    ...names.map((n) => `  ${n}Feature,`),
    ']',
    '',
  ].join('\n')

write(
  'server/features/widget/schema.ts',
  "export const widget = sqliteTable('widget', {})\nexport const widgetPart = sqliteTable(\n  'widgetPart',\n  {},\n)\nexport type WidgetRow = typeof widget.$inferSelect\n",
)
write(
  'server/features/widget/config.ts',
  'export const widgetConfig = z.object({})\nexport const configSections = { widget: widgetConfig }\n',
)
write('server/features/widget/panel-contract.ts', 'export const widgetRowSchema = z.object({})\nexport const widgetContract = {\n}\n')
write(
  'server/features/widget/columns.ts',
  'export const widgetColumns = {\n  user: {\n    widgetCount: integer(),\n  },\n  session: {\n    widgetId: text(),\n  },\n}\n' +
    'export const widgetUserDefaults = (_config: unknown) => ({ widgetCount: 0 })\n' +
    'export const widgetSessionDefaults = () => ({ widgetId: null })\n' +
    "export const widgetUserFieldAccess = { widgetCount: 'protected' } as const\n",
)
write(
  'server/features/rate-card/config.ts',
  "export const configSections = {\n  rateCard: rateCardConfig,\n  'user.rateCardNotice': noticeConfig,\n}\n",
)
write('server/features/rate-card/columns.ts', 'export const rateCardIndexes = {\n  user: (t: { widgetCount: unknown }) => [],\n}\n')
// On disk but not listed: must not appear anywhere.
write('server/features/unlisted/schema.ts', "export const unlisted = sqliteTable('unlisted', {})\n")
write('server/features/unlisted/config.ts', 'export const configSections = { unlisted: unlistedConfig }\n')

describe('bin/gen-features.js', () => {
  it('derives the aggregations (and the db floor table bindings) from the listed folders only, in the list order', async () => {
    write('server/features/index.ts', list(['widget', 'rateCard']))
    expect(listedFolders(root)).toEqual(['widget', 'rate-card'])
    const files = (await generatedFiles({ root })) as Record<string, string>
    const tables = files['server/features/tables.ts'] as string
    expect(tables).toContain("import * as widgetTables from './widget/schema.js'")
    expect(tables).toContain('  widget: widgetTables.widget,\n  widgetPart: widgetTables.widgetPart,\n')
    expect(tables).toContain("export { widget, widgetPart } from './widget/schema.js'")
    // The db floor names the tables and imports no feature.
    const bindings = files['server/db/feature-bindings.ts'] as string
    expect(bindings).toContain("export let widgetPart: Tables['widgetPart'] = unbound('widgetPart')")
    expect(bindings).toContain('  widgetPart = t.widgetPart')
    expect(bindings).not.toMatch(/^import .*features\//m)
    const sections = files['server/features/config-sections.ts'] as string
    expect(sections).toContain('  widget: widget.widget,\n  rateCard: rateCard.rateCard,\n')
    expect(sections).toContain("export const featureUserSections = {\n  rateCardNotice: rateCard['user.rateCardNotice'],\n}")
    const columns = files['server/features/columns.ts'] as string
    expect(columns).toContain('export const userFeatureColumns = {\n  ...widgetColumns.user,\n}')
    expect(columns).toContain('export const sessionFeatureColumns = {\n  ...widgetColumns.session,\n}')
    expect(columns).toContain('(t: Parameters<typeof rateCardIndexes.user>[0]) => [\n  ...rateCardIndexes.user(t),\n]')
    expect(columns).toContain(
      "import { widgetColumns, widgetUserDefaults, widgetSessionDefaults, widgetUserFieldAccess } from './widget/columns.js'",
    )
    // How the wire treats the columns (core users.ts: protected, shown when set), gathered likewise.
    expect(columns).toContain('export const userFeatureFieldAccess = {\n  ...widgetUserFieldAccess,\n}')
    // A new session's feature columns: gathered as the user's are (core's createSession spreads them).
    expect(columns).toContain('export const sessionFeatureDefaults = () => ({\n  ...widgetSessionDefaults(),\n})')
    expect(columns).toContain(
      'export const userFeatureDefaults = (config: Parameters<typeof widgetUserDefaults>[0]) => ({\n  ...widgetUserDefaults(config),\n})',
    )
    expect(files['server/features/panel-contracts.ts']).toContain('  ...widgetContract,\n')
    for (const text of Object.values(files)) expect(text).not.toMatch(/unlisted|widgetRowSchema|WidgetRow/)
  })

  it('a folder taken out of the list leaves every aggregation', async () => {
    write('server/features/index.ts', list(['rateCard']))
    const files = (await generatedFiles({ root })) as Record<string, string>
    for (const text of Object.values(files)) expect(text).not.toMatch(/widget/i)
    expect(files['server/features/tables.ts']).toContain('export const featureTables = {\n\n}')
    expect(files['server/db/feature-bindings.ts']).toContain('export function bindFeatureTables(_t: Tables): void {\n}')
  })

  it('refuses user columns without the new-user defaults beside them, naming the folder', async () => {
    write('server/features/index.ts', list(['gadget']))
    write('server/features/gadget/columns.ts', 'export const gadgetColumns = {\n  user: {\n    gadgetName: text(),\n  },\n}\n')
    await expect(generatedFiles({ root })).rejects.toThrow(
      'server/features/gadget/columns.ts: user columns but no `export const gadgetUserDefaults',
    )
  })

  it('refuses session columns without the new-session defaults beside them, naming the folder', async () => {
    write('server/features/index.ts', list(['gizmo']))
    write('server/features/gizmo/columns.ts', 'export const gizmoColumns = {\n  session: {\n    gizmoId: text(),\n  },\n}\n')
    await expect(generatedFiles({ root })).rejects.toThrow(
      'server/features/gizmo/columns.ts: session columns but no `export const gizmoSessionDefaults',
    )
  })

  it("gathers each folder's commands.ts and dependencies.ts (the check:deps rules and the doc's list), and refuses a dependency on itself", async () => {
    write('server/features/index.ts', list(['widget', 'rateCard']))
    write(
      'server/features/rate-card/commands.ts',
      "export const commands: CommandDeclaration[] = [\n  { name: 'rate', synopsis: 'rate', run: async () => 0 },\n]\n",
    )
    write(
      'server/features/widget/dependencies.ts',
      `export const dependsOn: FeatureDependencies = {\n  'rate-card/config.ts': "the widget's price is rate-card's",\n  'gadget': 'a \\'quoted\\' reason',\n}\n`,
    )
    write(
      'docs/ARCHITECTURE.md',
      "Before.\n<!-- dependencies: written by bin/gen-features.js from each feature's dependencies.ts -->\nstale\n<!-- end of dependencies -->\nAfter.\n",
    )
    const files = (await generatedFiles({ root })) as Record<string, string>
    expect(files['server/features/commands.ts']).toContain("import { commands as rateCardCommands } from './rate-card/commands.js'")
    expect(files['server/features/commands.ts']).toContain(
      'export const featureCommands: CommandDeclaration[] = [\n  ...rateCardCommands,\n]',
    )
    expect(JSON.parse(files['server/features/dependencies.json'] as string)).toEqual({
      widget: { 'rate-card/config.ts': "the widget's price is rate-card's", gadget: "a 'quoted' reason" },
    })
    expect(files['docs/ARCHITECTURE.md']).toBe(
      "Before.\n<!-- dependencies: written by bin/gen-features.js from each feature's dependencies.ts -->\n" +
        "- **widget** imports `rate-card/config.ts` (the widget's price is rate-card's); `gadget` (a 'quoted' reason).\n" +
        '<!-- end of dependencies -->\nAfter.\n',
    )
    write('server/features/widget/dependencies.ts', "export const dependsOn: FeatureDependencies = {\n  'widget/schema.ts': 'itself',\n}\n")
    await expect(generatedFiles({ root })).rejects.toThrow(
      'server/features/widget/dependencies.ts: "widget/schema.ts" is not another feature',
    )
    rmSync(join(root, 'server/features/widget/dependencies.ts'))
    rmSync(join(root, 'server/features/rate-card/commands.ts'))
  })

  it("gathers each folder's hosted pages (pages.ts) in the list's order, and refuses a page declared twice or a bad name", async () => {
    write('server/features/index.ts', list(['widget', 'rateCard']))
    write('server/features/rate-card/pages.ts', "export const hostedPages = ['account/rates', 'rates'] as const\n")
    write('server/features/widget/pages.ts', 'export const hostedPages = ["widgets"] as const\n')
    const files = (await generatedFiles({ root })) as Record<string, string>
    expect(files['server/features/hosted-page-list.ts']).toContain(
      "export const HOSTED_PAGES = [\n  'widgets', // widget\n  'account/rates', // rate-card\n  'rates', // rate-card\n] as const",
    )
    write('server/features/widget/pages.ts', "export const hostedPages = ['rates'] as const\n")
    await expect(generatedFiles({ root })).rejects.toThrow('hosted page "rates" is declared by both widget and rate-card')
    write('server/features/widget/pages.ts', "export const hostedPages = ['../admin'] as const\n")
    await expect(generatedFiles({ root })).rejects.toThrow('server/features/widget/pages.ts: "../admin" is not a page name')
    rmSync(join(root, 'server/features/widget/pages.ts'))
    rmSync(join(root, 'server/features/rate-card/pages.ts'))
  })

  it('refuses a config section it cannot mount, naming the folder', async () => {
    write('server/features/index.ts', list(['widget']))
    write('server/features/widget/config.ts', "export const configSections = { 'session.widget': widgetConfig }\n")
    await expect(generatedFiles({ root })).rejects.toThrow('server/features/widget/config.ts: section session.widget')
  })
})
