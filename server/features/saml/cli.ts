import { readFileSync } from 'node:fs'
import { parseFlags, withToolContext } from '../../core/cli-command.js'
import { listCertificates, retireOlderCertificates, rotateCertificate, type CertificateView } from './keys.js'
import {
  allServiceProviders,
  changeServiceProvider,
  createServiceProvider,
  fetchMetadata,
  removeServiceProvider,
  type ServiceProviderView,
  viewOf,
} from './service-providers.js'
import { SAML_USAGE } from './usage.js'

function usage(message: string): number {
  process.stderr.write(`gatehouse: ${message}\n\n${SAML_USAGE}`)
  return 2
}

const describeSp = (sp: ServiceProviderView): string =>
  `${sp.id}  ${sp.name}  (${sp.source}, NameID ${sp.nameIdFormat}${sp.allowedGroups.length ? `, groups ${sp.allowedGroups.join(',')}` : ''})\n  entityID: ${sp.entityId}\n  ACS: ${sp.acsUrls.join(' ')}\n`

const describeCert = (c: CertificateView): string =>
  `${c.id}  ${c.signing ? 'signing' : c.next ? `next (signs from ${new Date(c.activatesAt).toISOString()}, or at cert rotate --activate)` : 'published'}  until ${c.notAfter}\n  SHA-256 ${c.fingerprint256}\n`

/** Runs `gatehouse saml sp|cert …`; returns the exit code (0 done, 1 refused, 2 usage). */
export async function samlCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [group, sub, ...rest] = argv
  if (group === undefined || group === 'help') {
    process.stdout.write(SAML_USAGE)
    return group === undefined ? 2 : 0
  }
  const known: Record<string, string[]> = { sp: ['create', 'list', 'update', 'delete'], cert: ['list', 'rotate', 'retire'] }
  if (!known[group]) return usage(`unknown saml command "${group}"`)
  if (!sub || !known[group]?.includes(sub)) return usage(sub ? `unknown saml ${group} command "${sub}"` : `missing saml ${group} command`)
  const parsed = parseFlags(
    rest,
    {
      'data-dir': { type: 'string' },
      'metadata-file': { type: 'string' },
      'metadata-url': { type: 'string' },
      name: { type: 'string' },
      'name-id-format': { type: 'string' },
      'allowed-groups': { type: 'string' },
      sp: { type: 'string' },
      retire: { type: 'boolean' },
      activate: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    usage,
  )
  if ('exit' in parsed) return parsed.exit
  const { values } = parsed
  if (values['metadata-file'] && values['metadata-url']) return usage('give --metadata-file or --metadata-url, not both')
  if (group === 'sp' && sub === 'create' && !values['metadata-file'] && !values['metadata-url'])
    return usage('sp create needs --metadata-file or --metadata-url')
  if (group === 'sp' && (sub === 'update' || sub === 'delete') && !values.sp) return usage(`sp ${sub} needs --sp`)

  let metadataXml: string | undefined
  try {
    if (values['metadata-file']) metadataXml = readFileSync(values['metadata-file'], 'utf8')
  } catch (e) {
    process.stderr.write(`gatehouse: cannot read ${values['metadata-file']}: ${(e as Error).message}\n`)
    return 1
  }
  return withToolContext(values['data-dir'], env, async (ctx) => {
    const by = { via: 'cli' as const }
    const out = (json: unknown, text: string): void => {
      process.stdout.write(values.json ? `${JSON.stringify(json)}\n` : text)
    }
    const groups = values['allowed-groups']?.split(',').map((g) => g.trim())
    if (values['metadata-url']) metadataXml = await fetchMetadata(values['metadata-url'])
    if (group === 'cert') {
      const certs =
        sub === 'rotate'
          ? await rotateCertificate(ctx, { activate: values.activate ?? false, retire: values.retire ?? false }, by)
          : sub === 'retire'
            ? await retireOlderCertificates(ctx, by)
            : await listCertificates(ctx)
      out(certs, certs.map(describeCert).join(''))
      return 0
    }
    if (sub === 'create') {
      const sp = await createServiceProvider(
        ctx,
        { metadataXml: metadataXml as string, name: values.name, nameIdFormat: values['name-id-format'], allowedGroups: groups },
        by,
      )
      out(sp, describeSp(sp))
      return 0
    }
    if (sub === 'list') {
      const sps = (await allServiceProviders(ctx)).map(viewOf)
      out(sps, sps.length ? sps.map(describeSp).join('') : 'No SAML service providers.\n')
      return 0
    }
    if (sub === 'update') {
      const sp = await changeServiceProvider(
        ctx,
        values.sp as string,
        { metadataXml, name: values.name, nameIdFormat: values['name-id-format'], allowedGroups: groups },
        by,
      )
      out(sp, describeSp(sp))
      return 0
    }
    await removeServiceProvider(ctx, values.sp as string, by)
    out({ success: true }, `Deleted SAML service provider ${values.sp}\n`)
    return 0
  })
}
