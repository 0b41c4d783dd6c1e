import { Checkbox, Fieldset, Group, Select, Stack, Switch, Text, Textarea, TextInput } from '@mantine/core'
import type { OidcClientView } from '../../../../server/features/oidc-provider/panel-contract'

export const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA'] as const
export type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]
type SubjectType = OidcClientView['subjectType']
type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials'

/**
 * A client's settings as the registration form and the edit dialog hold them (one copy of the
 * fields: ClientFields). URI lists are text, one URI a line.
 */
export interface ClientForm {
  name: string
  redirectUris: string
  postLogoutRedirectUris: string
  backchannelLogoutUri: string
  public: boolean
  pkceRequired: boolean
  skipConsent: boolean
  requirePar: boolean
  resourceServer: boolean
  idTokenSignedResponseAlg: IdTokenAlg
  subjectType: SubjectType
  refreshToken: boolean
  clientCredentials: boolean
}

export const EMPTY_CLIENT_FORM: ClientForm = {
  name: '',
  redirectUris: '',
  postLogoutRedirectUris: '',
  backchannelLogoutUri: '',
  public: false,
  pkceRequired: true,
  skipConsent: false,
  requirePar: false,
  resourceServer: false,
  idTokenSignedResponseAlg: 'RS256',
  subjectType: 'public',
  refreshToken: true,
  clientCredentials: true,
}

/** The form of a stored client. */
export function formOf(c: OidcClientView): ClientForm {
  return {
    name: c.name,
    redirectUris: c.redirectUris.join('\n'),
    postLogoutRedirectUris: c.postLogoutRedirectUris.join('\n'),
    backchannelLogoutUri: c.backchannelLogoutUri ?? '',
    public: c.public,
    pkceRequired: c.pkceRequired,
    skipConsent: c.skipConsent,
    requirePar: c.requirePar,
    resourceServer: c.resourceServer,
    idTokenSignedResponseAlg: c.idTokenSignedResponseAlg,
    subjectType: c.subjectType,
    refreshToken: c.grantTypes.includes('refresh_token'),
    clientCredentials: c.grantTypes.includes('client_credentials'),
  }
}

const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((u) => u.trim())
    .filter(Boolean)

/** The grants the form gives (a public client never has client_credentials). */
export function grantTypesOf(f: ClientForm): GrantType[] {
  return [
    'authorization_code',
    ...(f.refreshToken ? (['refresh_token'] as const) : []),
    ...(f.clientCredentials && !f.public ? (['client_credentials'] as const) : []),
  ]
}

/** The registration's input; grant types only when they are not the default of the client's kind. */
export function createInputOf(f: ClientForm) {
  const grantTypes = grantTypesOf(f)
  const defaults = grantTypesOf({ ...f, refreshToken: true, clientCredentials: true })
  return {
    name: f.name,
    redirectUris: lines(f.redirectUris),
    postLogoutRedirectUris: lines(f.postLogoutRedirectUris),
    public: f.public,
    pkceRequired: f.pkceRequired,
    skipConsent: f.skipConsent,
    resourceServer: f.resourceServer,
    idTokenSignedResponseAlg: f.idTokenSignedResponseAlg,
    backchannelLogoutUri: f.backchannelLogoutUri.trim() || null,
    requirePar: f.requirePar,
    subjectType: f.subjectType,
    ...(grantTypes.join() === defaults.join() ? {} : { grantTypes }),
  }
}

/**
 * What the admin changed in the edit dialog against the stored client: only those fields are sent
 * (grant types only when a grant's box changed: a self-registered client keeps what it registered).
 */
export function changedFields(f: ClientForm, c: OidcClientView) {
  const before = formOf(c)
  const input = createInputOf(f)
  const patch: Partial<Omit<ReturnType<typeof createInputOf>, 'public'>> = {}
  if (f.name !== before.name) patch.name = input.name
  if (input.redirectUris.join('\n') !== c.redirectUris.join('\n')) patch.redirectUris = input.redirectUris
  if (input.postLogoutRedirectUris.join('\n') !== c.postLogoutRedirectUris.join('\n'))
    patch.postLogoutRedirectUris = input.postLogoutRedirectUris
  if (input.backchannelLogoutUri !== c.backchannelLogoutUri) patch.backchannelLogoutUri = input.backchannelLogoutUri
  if (!c.public && f.pkceRequired !== before.pkceRequired) patch.pkceRequired = f.pkceRequired
  if (f.skipConsent !== before.skipConsent) patch.skipConsent = f.skipConsent
  if (f.requirePar !== before.requirePar) patch.requirePar = f.requirePar
  if (f.resourceServer !== before.resourceServer) patch.resourceServer = f.resourceServer
  if (f.idTokenSignedResponseAlg !== before.idTokenSignedResponseAlg) patch.idTokenSignedResponseAlg = f.idTokenSignedResponseAlg
  if (f.subjectType !== before.subjectType) patch.subjectType = f.subjectType
  if (f.refreshToken !== before.refreshToken || f.clientCredentials !== before.clientCredentials) patch.grantTypes = grantTypesOf(f)
  return patch
}

/** Each field a patch changes as the dialog read it: the server refuses the save (409 CONFLICT) when another admin changed one since. */
export function baseOf(patch: object, read: OidcClientView): Record<string, unknown> {
  return Object.fromEntries(Object.keys(patch).map((field) => [field, read[field as keyof OidcClientView] ?? null]))
}

/**
 * The fields of a client, shared by the registration form (`oidc-…` test ids) and the edit dialog
 * (`oidc-edit-…`). `kindFixed`: the kind (public or confidential) is shown, not changed.
 */
export function ClientFields({
  form: f,
  onChange,
  errorFor,
  prefix,
  kindFixed = false,
}: {
  form: ClientForm
  onChange: (next: ClientForm) => void
  errorFor: (field: string) => string | undefined
  prefix: 'oidc' | 'oidc-edit'
  kindFixed?: boolean
}) {
  const set = <K extends keyof ClientForm>(key: K, value: ClientForm[K]) => onChange({ ...f, [key]: value })
  return (
    <Stack>
      <TextInput
        label="Name"
        value={f.name}
        onChange={(e) => set('name', e.currentTarget.value)}
        error={errorFor('name')}
        data-testid={`${prefix}-name`}
      />
      <Textarea
        label="Redirect URIs (one per line)"
        autosize
        minRows={2}
        value={f.redirectUris}
        onChange={(e) => set('redirectUris', e.currentTarget.value)}
        error={errorFor('redirectUris')}
        data-testid={`${prefix}-redirect-uris`}
      />
      <Textarea
        label="Post-logout redirect URIs (optional, one per line)"
        description="Where the application may send people after signing them out"
        autosize
        minRows={1}
        value={f.postLogoutRedirectUris}
        onChange={(e) => set('postLogoutRedirectUris', e.currentTarget.value)}
        error={errorFor('postLogoutRedirectUris')}
        data-testid={`${prefix}-post-logout-uris`}
      />
      <TextInput
        label="Back-channel logout URI (optional)"
        description="Where Gatehouse posts a logout token when a session that signed in to the application ends"
        value={f.backchannelLogoutUri}
        onChange={(e) => set('backchannelLogoutUri', e.currentTarget.value)}
        error={errorFor('backchannelLogoutUri')}
        data-testid={`${prefix}-backchannel-uri`}
      />
      <Group>
        {kindFixed ? (
          <Text size="sm" data-testid={`${prefix}-kind`}>
            {f.public ? 'Public client (no secret, PKCE)' : 'Confidential client (with a secret)'}: its kind stays (register a new client to
            change it)
          </Text>
        ) : (
          <Checkbox
            label="Public client (mobile or single-page app: no secret, PKCE)"
            checked={f.public}
            onChange={(e) => set('public', e.currentTarget.checked)}
            data-testid={`${prefix}-public`}
          />
        )}
        <Checkbox
          label="Require PKCE"
          checked={f.public || f.pkceRequired}
          disabled={f.public}
          onChange={(e) => set('pkceRequired', e.currentTarget.checked)}
          error={errorFor('pkceRequired')}
          data-testid={`${prefix}-pkce`}
        />
        <Checkbox
          label="Skip consent (first-party app)"
          checked={f.skipConsent}
          onChange={(e) => set('skipConsent', e.currentTarget.checked)}
          error={errorFor('skipConsent')}
          data-testid={`${prefix}-skip-consent`}
        />
        <Checkbox
          label="Require pushed authorization requests (PAR)"
          checked={f.requirePar}
          onChange={(e) => set('requirePar', e.currentTarget.checked)}
          error={errorFor('requirePar')}
          data-testid={`${prefix}-require-par`}
        />
      </Group>
      <Fieldset legend="Grant types" variant="unstyled">
        <Group>
          <Checkbox label="Authorization code (always)" checked disabled readOnly />
          <Checkbox
            label="Refresh token"
            checked={f.refreshToken}
            onChange={(e) => set('refreshToken', e.currentTarget.checked)}
            data-testid={`${prefix}-grant-refresh-token`}
          />
          <Checkbox
            label="Client credentials (confidential clients)"
            checked={f.clientCredentials && !f.public}
            disabled={f.public}
            onChange={(e) => set('clientCredentials', e.currentTarget.checked)}
            error={errorFor('grantTypes')}
            data-testid={`${prefix}-grant-client-credentials`}
          />
        </Group>
      </Fieldset>
      <Group align="flex-start">
        <Select
          label="Subject (sub) of its tokens"
          description="Pairwise: its own per person (one redirect host)"
          w={260}
          data={[
            { value: 'public', label: 'public (the user id)' },
            { value: 'pairwise', label: 'pairwise' },
          ]}
          value={f.subjectType}
          onChange={(v) => set('subjectType', (v as SubjectType | null) ?? 'public')}
          allowDeselect={false}
          error={errorFor('subjectType')}
          data-testid={`${prefix}-subject-type`}
        />
        <Select
          label="ID token signing algorithm"
          w={220}
          data={ID_TOKEN_ALGS}
          value={f.idTokenSignedResponseAlg}
          onChange={(v) => set('idTokenSignedResponseAlg', (v as IdTokenAlg | null) ?? 'RS256')}
          allowDeselect={false}
          error={errorFor('idTokenSignedResponseAlg')}
          data-testid={`${prefix}-id-token-alg`}
        />
        <Switch
          mt="xl"
          label="Resource server (may introspect every application’s tokens)"
          checked={f.resourceServer}
          onChange={(e) => set('resourceServer', e.currentTarget.checked)}
          error={errorFor('resourceServer')}
          data-testid={`${prefix}-resource-server`}
        />
      </Group>
    </Stack>
  )
}
