import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { recordAudit } from '../../core/audit.js'
import { objectChanges, refuseStale } from '../../core/object-revisions.js'
import type { AuthContext, RequestMeta } from '../../core/context.js'
import { generateId } from '../../crypto/random.js'
import type { NamedGroup } from '../../feature.js'
import { type NameIdFormat, nameIdFormatOf, type SamlServiceProviderConfig } from './config.js'
import { samlError } from './errors.js'
import { parseSpMetadata, type SpMetadata } from './metadata.js'
import type { SamlServiceProviderRow } from './schema.js'
import { deleteServiceProvider, findServiceProvider, insertServiceProvider, listServiceProviders, updateServiceProvider } from './store.js'

/**
 * The service providers: those of the database (CLI, panel; read at every request, so a change by
 * `gatehouse saml sp create` on the same data directory or by another instance counts at once) and
 * those of `saml.serviceProviders` (read-only here). An entityID in both: the config's wins.
 */

export interface ServiceProvider {
  id: string
  source: 'config' | 'database'
  name: string
  entityId: string
  nameIdFormat: NameIdFormat
  allowedGroups: string[]
  metadataXml: string
  meta: SpMetadata
  createdAt: number | null
  updatedAt: number | null
}

/** What the CLI, the panel and the JSON answers show. */
export interface ServiceProviderView {
  id: string
  source: 'config' | 'database'
  name: string
  entityId: string
  nameIdFormat: NameIdFormat
  allowedGroups: string[]
  acsUrls: string[]
  sloUrls: string[]
  authnRequestsSigned: boolean
  signingCertificates: number
  metadataXml: string
  createdAt: number | null
  updatedAt: number | null
}

export const viewOf = (sp: ServiceProvider): ServiceProviderView => ({
  id: sp.id,
  source: sp.source,
  name: sp.name,
  entityId: sp.entityId,
  nameIdFormat: sp.nameIdFormat,
  allowedGroups: sp.allowedGroups,
  acsUrls: sp.meta.acs.map((a) => a.location),
  sloUrls: sp.meta.slo.map((s) => s.location),
  authnRequestsSigned: sp.meta.authnRequestsSigned,
  signingCertificates: sp.meta.signingCerts.length,
  metadataXml: sp.metadataXml,
  createdAt: sp.createdAt,
  updatedAt: sp.updatedAt,
})

function fromRow(row: SamlServiceProviderRow): ServiceProvider | null {
  let meta: SpMetadata
  try {
    meta = parseSpMetadata(row.metadataXml)
  } catch {
    return null
  }
  return {
    id: row.id,
    source: 'database',
    name: row.name,
    entityId: row.entityId,
    nameIdFormat: nameIdFormatOf(row.nameIdFormat) ?? 'email',
    allowedGroups: row.allowedGroups,
    metadataXml: row.metadataXml,
    meta,
    createdAt: row.createdAt.getTime(),
    updatedAt: row.updatedAt.getTime(),
  }
}

const fromConfigCache = new WeakMap<SamlServiceProviderConfig[], ServiceProvider[]>()

/** The config's service providers (metadata files read once per config); one that cannot be read is skipped with a warning at start. */
export function configServiceProviders(ctx: AuthContext, onError?: (name: string, error: unknown) => void): ServiceProvider[] {
  const declared = ctx.config().saml.serviceProviders
  let list = fromConfigCache.get(declared)
  if (!list) {
    list = []
    for (const sp of declared) {
      try {
        const xml = sp.metadataXML ?? readFileSync(resolve(sp.metadataFile as string), 'utf8')
        const meta = parseSpMetadata(xml)
        list.push({
          id: `config:${sp.name}`,
          source: 'config',
          name: sp.name,
          entityId: meta.entityId,
          nameIdFormat: sp.nameIDFormat,
          allowedGroups: sp.allowedGroups,
          metadataXml: xml,
          meta,
          createdAt: null,
          updatedAt: null,
        })
      } catch (error) {
        onError?.(sp.name, error)
      }
    }
    fromConfigCache.set(declared, list)
  }
  return list
}

export async function allServiceProviders(ctx: AuthContext): Promise<ServiceProvider[]> {
  const fromConfig = configServiceProviders(ctx)
  const taken = new Set(fromConfig.map((sp) => sp.entityId))
  const fromDb = (await listServiceProviders(ctx))
    .map(fromRow)
    .filter((sp): sp is ServiceProvider => sp !== null && !taken.has(sp.entityId))
  return [...fromConfig, ...fromDb]
}

export async function serviceProviderByEntityId(ctx: AuthContext, entityId: string): Promise<ServiceProvider | null> {
  const fromConfig = configServiceProviders(ctx).find((sp) => sp.entityId === entityId)
  if (fromConfig) return fromConfig
  const row = await findServiceProvider(ctx, { entityId })
  return row ? fromRow(row) : null
}

/** By id, or by entityID. */
export async function findServiceProviderByRef(ctx: AuthContext, ref: string): Promise<ServiceProvider | null> {
  const fromConfig = configServiceProviders(ctx).find((sp) => sp.id === ref || sp.entityId === ref)
  if (fromConfig) return fromConfig
  const row = (await findServiceProvider(ctx, { id: ref })) ?? (await findServiceProvider(ctx, { entityId: ref }))
  return row ? fromRow(row) : null
}

/** Downloads an SP's metadata (http(s), at most 1 MiB, 10 s). */
export async function fetchMetadata(url: string): Promise<string> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw samlError(400, 'METADATA_FETCH_FAILED')
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw samlError(400, 'METADATA_FETCH_FAILED')
  try {
    const response = await fetch(parsed, { signal: AbortSignal.timeout(10_000), redirect: 'follow' })
    if (!response.ok) throw new Error(String(response.status))
    const text = await response.text()
    if (text.length > 1024 * 1024) throw new Error('too large')
    return text
  } catch {
    throw samlError(400, 'METADATA_FETCH_FAILED')
  }
}

export interface By {
  via: 'cli' | 'panel'
  actorUserId?: string | null
  meta?: RequestMeta | null
}

export interface ServiceProviderInput {
  metadataXml: string
  name?: string
  nameIdFormat?: string
  allowedGroups?: string[]
}

function checkFormat(value: string | undefined): NameIdFormat | undefined {
  if (value === undefined) return undefined
  const short = nameIdFormatOf(value)
  if (!short) throw samlError(400, 'INVALID_NAME_ID_FORMAT')
  return short
}

const groupsOf = (groups: string[] | undefined): string[] | undefined =>
  groups === undefined ? undefined : [...new Set(groups.map((g) => g.trim()).filter(Boolean))]

export async function createServiceProvider(ctx: AuthContext, input: ServiceProviderInput, by: By): Promise<ServiceProviderView> {
  const meta = parseSpMetadata(input.metadataXml)
  const name = (input.name ?? meta.entityId).trim()
  if (!name) throw samlError(400, 'NAME_REQUIRED')
  if (configServiceProviders(ctx).some((sp) => sp.entityId === meta.entityId)) throw samlError(400, 'SP_EXISTS')
  const now = new Date(ctx.clock.now())
  const row: SamlServiceProviderRow = {
    id: generateId(),
    entityId: meta.entityId,
    name,
    metadataXml: input.metadataXml,
    nameIdFormat: checkFormat(input.nameIdFormat) ?? 'email',
    allowedGroups: groupsOf(input.allowedGroups) ?? [],
    createdAt: now,
    updatedAt: now,
  }
  if (!(await insertServiceProvider(ctx, row))) throw samlError(400, 'SP_EXISTS')
  await recordAudit(ctx, {
    type: 'saml.sp-created',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, name, entityId: row.entityId, nameIdFormat: row.nameIdFormat, allowedGroups: row.allowedGroups },
    meta: by.meta ?? null,
  })
  return viewOf(fromRow(row) as ServiceProvider)
}

export type ServiceProviderPatch = Partial<ServiceProviderInput>

async function databaseRow(ctx: AuthContext, ref: string): Promise<SamlServiceProviderRow> {
  const sp = await findServiceProviderByRef(ctx, ref)
  if (!sp) throw samlError(404, 'SP_NOT_FOUND')
  if (sp.source === 'config') throw samlError(400, 'SP_FROM_CONFIG')
  const row = await findServiceProvider(ctx, { id: sp.id })
  if (!row) throw samlError(404, 'SP_NOT_FOUND')
  return row
}

/** What a change of a service provider records and compares: every field its view shows but the times (none is secret). */
const TIMES = ['createdAt', 'updatedAt']

/**
 * Changes the fields given. `base` (the panel): each changed field as the view read it; a field
 * another admin changed since is refused (StaleSave, 409 CONFLICT) and nothing is saved. The audit
 * event records the old and new value of every field that changed.
 */
export async function changeServiceProvider(
  ctx: AuthContext,
  ref: string,
  patch: ServiceProviderPatch,
  by: By,
  base?: Record<string, unknown>,
): Promise<ServiceProviderView> {
  const { before, row } = await ctx.storage.transaction(async () => {
    const current = await databaseRow(ctx, ref)
    const before = viewOf(fromRow(current) as ServiceProvider)
    await refuseStale(ctx, { type: 'saml.sp-', target: current.id }, { ...before }, { ...patch }, base)
    const next: Partial<SamlServiceProviderRow> = { updatedAt: new Date(ctx.clock.now()) }
    if (patch.metadataXml !== undefined) {
      const meta = parseSpMetadata(patch.metadataXml)
      if (meta.entityId !== current.entityId && configServiceProviders(ctx).some((sp) => sp.entityId === meta.entityId))
        throw samlError(400, 'SP_EXISTS')
      next.metadataXml = patch.metadataXml
      next.entityId = meta.entityId
    }
    if (patch.name !== undefined) {
      next.name = patch.name.trim()
      if (!next.name) throw samlError(400, 'NAME_REQUIRED')
    }
    const format = checkFormat(patch.nameIdFormat)
    if (format) next.nameIdFormat = format
    const groups = groupsOf(patch.allowedGroups)
    if (groups) next.allowedGroups = groups
    let row: SamlServiceProviderRow | null
    try {
      row = await updateServiceProvider(ctx, current.id, next)
    } catch (error) {
      if ((error as { clash?: boolean }).clash) throw samlError(400, 'SP_EXISTS')
      throw error
    }
    if (!row) throw samlError(404, 'SP_NOT_FOUND')
    return { before, row }
  })
  const after = viewOf(fromRow(row) as ServiceProvider)
  const changes = objectChanges({ ...before }, { ...after }, { ignore: TIMES })
  await recordAudit(ctx, {
    type: 'saml.sp-updated',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, fields: changes.map((c) => c.key), changes },
    meta: by.meta ?? null,
  })
  return after
}

export async function removeServiceProvider(ctx: AuthContext, ref: string, by: By): Promise<void> {
  const row = await databaseRow(ctx, ref)
  if (!(await deleteServiceProvider(ctx, row.id))) throw samlError(404, 'SP_NOT_FOUND')
  await recordAudit(ctx, {
    type: 'saml.sp-deleted',
    actorUserId: by.actorUserId ?? null,
    target: row.id,
    detail: { via: by.via, entityId: row.entityId },
    meta: by.meta ?? null,
  })
}

/** The groups the service providers admit (config and database, SAML on or off: a slug claimed meanwhile would pass once it is on). */
export async function serviceProvidersNamedGroups(ctx: AuthContext): Promise<NamedGroup[]> {
  const declared = ctx.config().saml.serviceProviders.map((sp) => ({ name: sp.name, groups: sp.allowedGroups }))
  const stored = (await listServiceProviders(ctx)).map((row) => ({ name: row.name, groups: row.allowedGroups }))
  // Matched against the person's group names (flows.ts inAllowedGroups): the groups.* switches decide who holds them.
  return [...declared, ...stored].flatMap((sp) => sp.groups.map((name) => ({ where: `SAML app "${sp.name}"`, name, byGroupName: true })))
}
