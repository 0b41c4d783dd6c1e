import {
  ActionIcon,
  Badge,
  Button,
  Card,
  Checkbox,
  Code,
  CopyButton,
  Group,
  List,
  Modal,
  MultiSelect,
  NumberInput,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Tooltip,
} from '@mantine/core'
import { IconCheck, IconCopy, IconPlus } from '@tabler/icons-react'
import { useState } from 'react'
import type { OidcClientView } from '../../../../server/features/oidc-provider/panel-contract'
import { useOp, useOpMutation } from '../../api'
import { ConfirmButton, ErrorNotice, Loading, PageHeader } from '../../components/common'
import { Allowed, Editable } from '../../access'
import { dateTime, duration } from '../../format'
import { useDeepLink } from '../../deep-link'
import { ink } from '../../ink'
import { useUnsaved } from '../../unsaved'
import { notifications } from '@mantine/notifications'
import { fillRecipe, RECIPES, type Recipe } from './recipes'

const ID_TOKEN_ALGS = ['RS256', 'ES256', 'EdDSA'] as const
type IdTokenAlg = (typeof ID_TOKEN_ALGS)[number]

/** A client's token settings, changed in place: the ID token algorithm and the resource-server switch. */
function TokenSettings({ client, onChanged }: { client: OidcClientView; onChanged: () => void }) {
  const update = useOpMutation('oidc.updateClient')
  return (
    <Editable op="oidc.updateClient">
      <Stack gap={4}>
        <Select
          size="xs"
          w={110}
          aria-label={`ID token algorithm of ${client.name}`}
          data={ID_TOKEN_ALGS}
          value={client.idTokenSignedResponseAlg}
          allowDeselect={false}
          onChange={(v) =>
            v && update.mutate({ clientId: client.clientId, idTokenSignedResponseAlg: v as IdTokenAlg }, { onSuccess: onChanged })
          }
          data-testid={`oidc-alg-${client.clientId}`}
        />
        <Switch
          size="xs"
          label="resource server"
          checked={client.resourceServer}
          onChange={(e) => update.mutate({ clientId: client.clientId, resourceServer: e.currentTarget.checked }, { onSuccess: onChanged })}
          data-testid={`oidc-rs-${client.clientId}`}
        />
        <ErrorNotice error={update.error} />
      </Stack>
    </Editable>
  )
}

/**
 * Who may sign in to a client: members of the chosen organizations (and of the teams already set
 * through the panel operation or the CLI, kept as they are). Empty: every Gatehouse user.
 */
function AccessModal({ client, onClose }: { client: OidcClientView | null; onClose: () => void }) {
  const orgs = useOp('orgs.list', { limit: 500 }, { enabled: client !== null })
  const update = useOpMutation('oidc.updateClient')
  const [chosen, setChosen] = useState<string[] | null>(null)
  if (!client) return null
  const value = chosen ?? client.allowedOrganizations
  const close = () => {
    setChosen(null)
    onClose()
  }
  return (
    <Modal opened onClose={close} title={`Who may sign in to ${client.name}`} centered>
      <Editable op="oidc.updateClient" note>
        <Stack>
          <MultiSelect
            label="Members of these organizations"
            description="Empty: every Gatehouse user. Anyone else is sent back to the application with access_denied."
            data={(orgs.data?.organizations ?? []).map((o) => ({ value: o.id, label: `${o.name} (${o.slug})` }))}
            value={value}
            onChange={setChosen}
            searchable
            error={update.error?.messageFor('allowedOrganizations')}
            data-testid="oidc-allowed-orgs"
          />
          {client.allowedTeams.length > 0 ? (
            <Text size="sm" c="dimmed">
              Members of {client.allowedTeams.length} chosen team(s) are allowed too.
            </Text>
          ) : null}
          <Group justify="flex-end">
            <Button
              loading={update.isPending}
              onClick={() => update.mutate({ clientId: client.clientId, allowedOrganizations: value }, { onSuccess: close })}
            >
              Save
            </Button>
          </Group>
        </Stack>
      </Editable>
    </Modal>
  )
}

/** A value with a button that copies it (says "Copied" once the clipboard took it). */
function Copyable({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm" w={110}>
        {label}
      </Text>
      <Code style={{ flex: 1, wordBreak: 'break-all' }} data-testid={testId}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={copied ? 'Copied' : `Copy ${label.toLowerCase()}`} withArrow>
            <ActionIcon
              variant="light"
              color={copied ? 'teal' : 'gray'}
              onClick={copy}
              aria-label={`Copy ${label.toLowerCase()}`}
              data-testid={`${testId}-copy`}
            >
              {copied ? <IconCheck size={16} /> : <IconCopy size={16} />}
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  )
}

/**
 * The secret of a client just created or rotated: shown this once, with copy buttons. Escape and a
 * click outside do not close it (the secret would be lost): only Done does.
 */
function SecretModal({
  shown,
  issuer,
  onClose,
}: {
  shown: { client: OidcClientView; clientSecret: string | null; recipe?: Recipe } | null
  issuer: string
  onClose: () => void
}) {
  if (!shown) return null
  const values = { issuer, clientId: shown.client.clientId, clientSecret: shown.clientSecret }
  return (
    <Modal
      opened
      onClose={onClose}
      title={`${shown.client.name}: copy these now`}
      size="lg"
      centered
      closeOnEscape={false}
      closeOnClickOutside={false}
      withCloseButton={false}
    >
      <Stack>
        <Copyable label="Client ID" value={shown.client.clientId} testId="oidc-new-client-id" />
        {shown.clientSecret ? (
          <>
            <Copyable label="Client secret" value={shown.clientSecret} testId="oidc-new-client-secret" />
            <Text size="sm" c="dimmed">
              Shown this once; only its hash is stored.
            </Text>
          </>
        ) : (
          <Text size="sm">Public client: no secret, PKCE required.</Text>
        )}
        {shown.recipe ? (
          <>
            <Text size="sm" fw={500}>
              Paste into {shown.recipe.name}
            </Text>
            <Code block>{fillRecipe(shown.recipe.paste, values)}</Code>
          </>
        ) : null}
        <Button onClick={onClose}>Done</Button>
      </Stack>
    </Modal>
  )
}

function CreateClient({
  issuer,
  onCreated,
}: {
  issuer: string
  onCreated: (shown: { client: OidcClientView; clientSecret: string | null; recipe?: Recipe }) => void
}) {
  const create = useOpMutation('oidc.createClient')
  const [recipeId, setRecipeId] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [uris, setUris] = useState('')
  const [isPublic, setPublic] = useState(false)
  const [pkce, setPkce] = useState(true)
  const [skipConsent, setSkipConsent] = useState(false)
  const [resourceServer, setResourceServer] = useState(false)
  const [idTokenAlg, setIdTokenAlg] = useState<IdTokenAlg>('RS256')
  const recipe = RECIPES.find((r) => r.id === recipeId)
  const useRecipe = (id: string | null) => {
    setRecipeId(id)
    const r = RECIPES.find((x) => x.id === id)
    if (!r) return
    setName(r.name)
    setUris(r.redirectUris.join('\n'))
    setPublic(r.public ?? false)
    setPkce(!r.noPkce)
  }
  return (
    <Card withBorder>
      <Stack>
        <Select
          label="Recipe"
          placeholder="Pick an application (optional)"
          data={RECIPES.map((r) => ({ value: r.id, label: r.name }))}
          value={recipeId}
          onChange={useRecipe}
          clearable
          data-testid="oidc-recipe"
        />
        {recipe ? (
          <Text size="sm" c="dimmed">
            Redirect URI pattern:{' '}
            {recipe.redirectUris.map((u) => (
              <Code key={u}>{u}</Code>
            ))}
            . Replace APP with the application’s URL. Its documentation: {recipe.docs}
          </Text>
        ) : null}
        <TextInput
          label="Name"
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          error={create.error?.messageFor('name')}
          data-testid="oidc-name"
        />
        <Textarea
          label="Redirect URIs (one per line)"
          autosize
          minRows={2}
          value={uris}
          onChange={(e) => setUris(e.currentTarget.value)}
          error={create.error?.messageFor('redirectUris')}
          data-testid="oidc-redirect-uris"
        />
        <Group>
          <Checkbox
            label="Public client (mobile or single-page app: no secret, PKCE)"
            checked={isPublic}
            onChange={(e) => setPublic(e.currentTarget.checked)}
          />
          <Checkbox
            label="Require PKCE"
            checked={isPublic || pkce}
            disabled={isPublic}
            onChange={(e) => setPkce(e.currentTarget.checked)}
          />
          <Checkbox
            label="Skip consent (first-party app)"
            checked={skipConsent}
            onChange={(e) => setSkipConsent(e.currentTarget.checked)}
          />
        </Group>
        <Group>
          <Select
            label="ID token signing algorithm"
            w={220}
            data={ID_TOKEN_ALGS}
            value={idTokenAlg}
            onChange={(v) => setIdTokenAlg((v as IdTokenAlg | null) ?? 'RS256')}
            allowDeselect={false}
            data-testid="oidc-id-token-alg"
          />
          <Switch
            label="Resource server (may introspect every application’s tokens)"
            checked={resourceServer}
            onChange={(e) => setResourceServer(e.currentTarget.checked)}
            data-testid="oidc-resource-server"
          />
        </Group>
        <ErrorNotice error={create.error && !create.error.field ? create.error : null} />
        <Group>
          <Button
            leftSection={<IconPlus size={14} />}
            loading={create.isPending}
            data-testid="oidc-create"
            onClick={() =>
              create.mutate(
                {
                  name,
                  redirectUris: uris
                    .split('\n')
                    .map((u) => u.trim())
                    .filter(Boolean),
                  public: isPublic,
                  pkceRequired: pkce,
                  skipConsent,
                  resourceServer,
                  idTokenSignedResponseAlg: idTokenAlg,
                },
                { onSuccess: (answer) => onCreated({ ...answer, recipe }) },
              )
            }
          >
            Register application
          </Button>
          <Text size="xs" c="dimmed">
            Issuer: <Code>{issuer}</Code>
          </Text>
        </Group>
      </Stack>
    </Card>
  )
}

/** The one group-name rule (`groups.*`), shared with forward auth, LDAP and SAML. */
const GROUP_SWITCHES = [
  ['roles', 'Gatehouse roles (admin)'],
  ['organizations', 'Organization slugs (acme)'],
  ['memberRoles', 'Roles in them (acme:admin)'],
  ['teams', 'Teams (acme/Developers)'],
] as const

const LIFETIMES = [
  ['authorizationCode', 'Authorization code'],
  ['accessToken', 'Access token'],
  ['idToken', 'ID token'],
  ['refreshToken', 'Refresh token'],
  ['clientCredentials', 'Client-credentials token'],
  ['session', 'SSO session'],
  ['grant', 'Consent (grant)'],
  ['interaction', 'Sign-in request'],
] as const

/**
 * `oidcProvider.ttl` as durations (seconds, with the duration spelled out, as in Settings), saved
 * together after a review of what changes; a view left with unsaved lifetimes asks first.
 */
function Lifetimes({ ttl }: { ttl: Record<string, number> }) {
  const configure = useOpMutation('oidc.configure')
  const [draft, setDraft] = useState<Record<string, number | ''>>({})
  const [reviewing, setReviewing] = useState(false)
  const changed = LIFETIMES.filter(([key]) => key in draft && draft[key] !== ttl[key])
  const invalid = changed.some(([key]) => typeof draft[key] !== 'number' || (draft[key] as number) < 1)
  useUnsaved('sso-lifetimes', changed.length > 0)
  const shown = (v: number | '' | undefined) => (typeof v === 'number' ? `${v} s (${duration(v)})` : 'empty')
  return (
    <>
      <Text fw={500}>Lifetimes</Text>
      <Group align="flex-start">
        {LIFETIMES.map(([key, label]) => {
          const value = key in draft ? draft[key] : ttl[key]
          return (
            <NumberInput
              key={key}
              label={label}
              w={190}
              min={1}
              allowDecimal={false}
              suffix=" s"
              value={value ?? ''}
              description={typeof value === 'number' && value > 0 ? duration(value) : ' '}
              error={value === '' || (typeof value === 'number' && value < 1) ? 'Must be at least 1 second' : undefined}
              onChange={(v) => setDraft((d) => ({ ...d, [key]: v === '' ? '' : Number(v) }))}
              data-testid={`oidc-ttl-${key}`}
            />
          )
        })}
      </Group>
      <Group justify="flex-end">
        {changed.length > 0 && (
          <Badge color={ink.accent} variant="outline" data-testid="oidc-ttl-unsaved">
            {changed.length} unsaved change{changed.length === 1 ? '' : 's'}
          </Badge>
        )}
        <Button variant="default" disabled={changed.length === 0} onClick={() => setDraft({})}>
          Discard
        </Button>
        <Button disabled={changed.length === 0 || invalid} onClick={() => setReviewing(true)} data-testid="oidc-ttl-save">
          Review and save
        </Button>
      </Group>
      <Modal opened={reviewing} onClose={() => setReviewing(false)} title="Save token lifetimes?" centered>
        <Stack>
          <List size="sm" data-testid="oidc-ttl-review">
            {changed.map(([key, label]) => (
              <List.Item key={key}>
                <Text span fw={600} size="sm">
                  {label}
                </Text>
                : {shown(ttl[key])} → {shown(draft[key])}
              </List.Item>
            ))}
          </List>
          <Text size="sm">New tokens get the new lifetimes; tokens already issued keep theirs.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setReviewing(false)}>
              Keep editing
            </Button>
            <Button
              loading={configure.isPending}
              data-testid="oidc-ttl-confirm"
              onClick={() =>
                configure.mutate(
                  { patch: { ttl: Object.fromEntries(changed.map(([key]) => [key, draft[key]])) } },
                  {
                    onSuccess: () => {
                      setDraft({})
                      notifications.show({ color: 'teal', title: 'Token lifetimes saved', message: 'New tokens use them from now on.' })
                    },
                    onSettled: () => setReviewing(false),
                  },
                )
              }
            >
              Save {changed.length} change{changed.length === 1 ? '' : 's'}
            </Button>
          </Group>
          <ErrorNotice error={configure.error} />
        </Stack>
      </Modal>
    </>
  )
}

/** The group names (`groups.*`, applied live to every face) and the lifetimes. */
function ProviderSettings() {
  const settings = useOp('oidc.settings', {})
  const groups = useOp('groups.settings', {})
  const configure = useOpMutation('oidc.configure')
  const configureGroups = useOpMutation('groups.configure')
  if (!settings.data || !groups.data)
    return (settings.error ?? groups.error) ? <ErrorNotice error={settings.error ?? groups.error} /> : <Loading />
  const s = settings.data as { ttl: Record<string, number> }
  const rule = groups.data as Record<string, boolean>
  return (
    <Card withBorder>
      <Editable op="oidc.configure">
        <Stack gap="xs">
          <Editable op="groups.configure">
            <Text fw={500}>The groups claim lists (the same names as forward auth, LDAP and SAML)</Text>
            <Group>
              {GROUP_SWITCHES.map(([key, label]) => (
                <Switch
                  key={key}
                  label={label}
                  checked={rule[key] === true}
                  onChange={(e) =>
                    configureGroups.mutate({ patch: { [key]: e.currentTarget.checked } }, { onSuccess: () => void groups.refetch() })
                  }
                  data-testid={`oidc-groups-${key}`}
                />
              ))}
            </Group>
          </Editable>
          <Lifetimes ttl={s.ttl} />
          <ErrorNotice error={configure.error ?? configureGroups.error} />
        </Stack>
      </Editable>
    </Card>
  )
}

export default function OidcClientsPage() {
  const clients = useOp('oidc.clients', {})
  const configure = useOpMutation('oidc.configure')
  const rotate = useOpMutation('oidc.rotateSecret')
  const remove = useOpMutation('oidc.deleteClient')
  // `#/sso/<clientId>`: the client's own address (issue 31 §3), opening its access dialog.
  const [linked, openClient, closeClient] = useDeepLink('sso')
  const [shown, setShown] = useState<{ client: OidcClientView; clientSecret: string | null; recipe?: Recipe } | null>(null)
  if (!clients.data) return clients.error ? <ErrorNotice error={clients.error} onRetry={() => void clients.refetch()} /> : <Loading />
  const { issuer, enabled } = clients.data
  const access = linked ? (clients.data.clients.find((c) => c.clientId === linked) ?? null) : null
  return (
    <Stack>
      <PageHeader
        title="Single sign-on"
        description="Gatehouse as an OpenID Connect provider: Grafana, Gitea, Nextcloud, Immich and other apps sign their users in here."
      />
      <Card withBorder>
        <Editable op="oidc.configure" note>
          <Switch
            label={`OpenID Connect provider enabled (discovery at ${issuer}/.well-known/openid-configuration)`}
            checked={enabled}
            onChange={(e) => configure.mutate({ patch: { enabled: e.currentTarget.checked } }, { onSuccess: () => void clients.refetch() })}
            data-testid="oidc-enabled"
          />
          <ErrorNotice error={configure.error} />
        </Editable>
      </Card>
      <ProviderSettings />
      <Allowed op="oidc.createClient" hide>
        <CreateClient
          issuer={issuer}
          onCreated={(s) => {
            setShown(s)
            void clients.refetch()
          }}
        />
      </Allowed>
      <ErrorNotice error={rotate.error ?? remove.error} />
      {clients.data.clients.length === 0 ? (
        <Text c="dimmed">No application yet.</Text>
      ) : (
        <Table striped data-testid="oidc-clients">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Application</Table.Th>
              <Table.Th>Client ID</Table.Th>
              <Table.Th>Redirect URIs</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Tokens</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {clients.data.clients.map((c) => (
              <Table.Tr key={c.clientId}>
                <Table.Td>{c.name}</Table.Td>
                <Table.Td>
                  <Code>{c.clientId}</Code>
                </Table.Td>
                <Table.Td>
                  <Stack gap={2}>
                    {c.redirectUris.map((u) => (
                      <Code key={u}>{u}</Code>
                    ))}
                  </Stack>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    <Badge variant="light">{c.public ? 'public' : 'confidential'}</Badge>
                    {c.pkceRequired ? null : (
                      <Badge variant="light" color="yellow">
                        PKCE optional
                      </Badge>
                    )}
                    {c.skipConsent ? (
                      <Badge variant="light" color="gray">
                        no consent
                      </Badge>
                    ) : null}
                    {c.allowedOrganizations.length + c.allowedTeams.length > 0 ? (
                      <Badge variant="light" color="grape">
                        restricted
                      </Badge>
                    ) : null}
                  </Group>
                </Table.Td>
                <Table.Td>
                  <TokenSettings client={c} onChanged={() => void clients.refetch()} />
                </Table.Td>
                <Table.Td>{dateTime(c.createdAt)}</Table.Td>
                <Table.Td>
                  <Group gap={4} justify="flex-end">
                    <Button size="xs" variant="light" onClick={() => openClient(c.clientId)} data-testid={`oidc-access-${c.clientId}`}>
                      Access
                    </Button>
                    {c.public ? null : (
                      <Allowed op="oidc.rotateSecret">
                        <ConfirmButton
                          label="New secret"
                          color="indigo"
                          title={`New secret for ${c.name}`}
                          message="The current secret stops working at once; paste the new one into the application."
                          confirmLabel="Rotate"
                          onConfirm={() => rotate.mutate({ clientId: c.clientId }, { onSuccess: (answer) => setShown(answer) })}
                        />
                      </Allowed>
                    )}
                    <Allowed op="oidc.deleteClient">
                      <ConfirmButton
                        label="Delete"
                        title={`Delete ${c.name}`}
                        message="The application can no longer sign users in; its tokens stop working."
                        confirmLabel="Delete"
                        onConfirm={() => remove.mutate({ clientId: c.clientId }, { onSuccess: () => void clients.refetch() })}
                      />
                    </Allowed>
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <SecretModal shown={shown} issuer={issuer} onClose={() => setShown(null)} />
      <AccessModal
        client={access}
        onClose={() => {
          closeClient()
          void clients.refetch()
        }}
      />
    </Stack>
  )
}
