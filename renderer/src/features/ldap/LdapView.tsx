import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  CopyButton,
  Group,
  NumberInput,
  Select,
  Stack,
  Switch,
  Table,
  TagsInput,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useMemo, useState } from 'react'
import { parseRoleList } from '../../../../server/core/access-control'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ErrorNotice, Loading, PageHeader, showFieldErrors } from '../../components/common'
import { FormCard } from '../../components/FormCard'
import { ListenerStates } from '../../components/ListenerStates'
import { DOC_VALUES, hostOf, type LdapValues, portOf, RECIPES, withTls } from './recipes'
import { LdapTestBox } from './LdapTestBox'
import { changedFields } from '../../config-save'
import { FIELD_PATHS, LDAP_DEFAULTS, type LdapForm, ldapFormOf, ldapValues } from './settings'
import { type Startup, useStartup } from '../../startup'

/**
 * The LDAP view: the `ldap.*` settings (read and written through the Settings operations, so the
 * view needs nothing of the LDAP server's own code), the service users (people whose role is in
 * `ldap.searchRoles`) and copy-paste settings for common apps with this Gatehouse's values.
 */

/** The people whose role is `role` (the users list filtered by role; a role list counts when it names it). */
function ServiceUsersOf({ role, onUids }: { role: string; onUids: (role: string, uids: string[]) => void }) {
  const users = useOp('users.list', { filterField: 'role', filterValue: role, filterOperator: 'contains', limit: 100 })
  const rows = (users.data?.users ?? []).filter((u) => parseRoleList(u.role ?? '').includes(role))
  const uids = rows.map((u) => (u.username ?? u.email).toLowerCase())
  const key = uids.join(',')
  // biome-ignore lint/correctness/useExhaustiveDependencies: the list is reported when its content changes
  useEffect(() => onUids(role, uids), [key, role])
  if (users.isPending) return <Loading />
  if (users.error) return <ErrorNotice error={users.error} onRetry={() => void users.refetch()} />
  return (
    <>
      {rows.map((u) => (
        <Table.Tr key={`${role}-${u.id}`}>
          <Table.Td>
            <Anchor href={`#/users/${u.id}`}>{u.name || u.email}</Anchor>
          </Table.Td>
          <Table.Td>
            <Code>{(u.username ?? u.email).toLowerCase()}</Code>
          </Table.Td>
          <Table.Td>
            <Badge variant="light">{role}</Badge>
          </Table.Td>
        </Table.Tr>
      ))}
    </>
  )
}

/** The `ldap.*` settings: switch, addresses, base DN, the roles that may search, timeouts. */
function ListenerCard({
  form,
  set,
  present,
  saving,
  fieldError,
  onSubmit,
  startup,
}: {
  form: LdapForm
  set: <K extends keyof LdapForm>(key: K, value: LdapForm[K]) => void
  /** Keys set at start-up: read-only here, with the badge and the reason, and never saved. */
  startup: Startup
  present: boolean
  saving: boolean
  fieldError: (key: string) => string | undefined
  onSubmit: () => void
}) {
  return (
    <FormCard title="Listener" op="settings.update" testId="ldap-form" onSubmit={onSubmit}>
      <Switch
        {...startup.field('ldap.enabled', { label: 'LDAP server enabled' })}
        checked={form.enabled}
        onChange={(e) => startup.of('ldap.enabled') || set('enabled', e.currentTarget.checked)}
        error={fieldError('enabled')}
        data-testid="ldap-enabled"
      />
      <Group grow align="flex-start">
        <TextInput
          {...startup.field('ldap.address', {
            label: 'Address',
            description: 'host:port of the LDAP listener (StartTLS when a certificate is set)',
          })}
          data-testid="ldap-address"
          value={form.address}
          onChange={(e) => set('address', e.currentTarget.value)}
          error={fieldError('address')}
        />
        <TextInput
          {...startup.field('ldap.ldapsAddress', {
            label: 'LDAPS address',
            description: 'host:port of an LDAPS listener; empty: none',
          })}
          data-testid="ldap-ldapsAddress"
          value={form.ldapsAddress}
          onChange={(e) => set('ldapsAddress', e.currentTarget.value)}
          error={fieldError('ldapsAddress')}
        />
      </Group>
      <TextInput
        {...startup.field('ldap.baseDN', { label: 'Base DN', description: 'People are under ou=people, groups under ou=groups' })}
        data-testid="ldap-baseDN"
        value={form.baseDN}
        onChange={(e) => set('baseDN', e.currentTarget.value)}
        error={fieldError('baseDN')}
      />
      <TagsInput
        {...startup.field('ldap.searchRoles', {
          label: 'Roles that may search',
          description: 'People with one of these roles see the whole directory: apps bind as such a service user',
        })}
        data-testid="ldap-searchRoles"
        value={form.searchRoles}
        onChange={(v) => set('searchRoles', v)}
        error={fieldError('searchRoles')}
      />
      <NumberInput
        {...startup.field('ldap.idleTimeout', {
          label: 'Idle timeout (seconds)',
          description: 'A connection that sends nothing for this long is closed',
        })}
        data-testid="ldap-idleTimeout"
        min={1}
        value={form.idleTimeout}
        onChange={(v) => set('idleTimeout', typeof v === 'number' ? v : LDAP_DEFAULTS.idleTimeout)}
        error={fieldError('idleTimeout')}
      />
      <Switch
        {...startup.field('ldap.allowMainPasswordWithSecondFactor', {
          label: 'Allow the main password for people with a second factor',
          description: 'Off (recommended): they bind with an app password, so LDAP does not bypass their second factor',
        })}
        data-testid="ldap-allowMainPasswordWithSecondFactor"
        checked={form.allowMainPasswordWithSecondFactor}
        onChange={(e) =>
          startup.of('ldap.allowMainPasswordWithSecondFactor') || set('allowMainPasswordWithSecondFactor', e.currentTarget.checked)
        }
        error={fieldError('allowMainPasswordWithSecondFactor')}
      />
      <Group>
        <Button type="submit" loading={saving} disabled={!present} data-testid="ldap-save">
          Save
        </Button>
      </Group>
    </FormCard>
  )
}

/** The people apps bind as: everyone whose role may search. */
function ServiceUsersCard({ roles, nobody, onUids }: { roles: string[]; nobody: boolean; onUids: (role: string, uids: string[]) => void }) {
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Service users
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        People whose role is in the roles that may search. An app binds as one of them with an app password of that person (made on the
        hosted page /ui/account/app-passwords while signed in as them).
      </Text>
      <Table fz="sm" data-testid="ldap-service-users">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Person</Table.Th>
            <Table.Th>uid</Table.Th>
            <Table.Th>Role</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {roles.map((role) => (
            <ServiceUsersOf key={role} role={role} onUids={onUids} />
          ))}
        </Table.Tbody>
      </Table>
      {nobody && (
        <Text size="sm" c="dimmed" mt="xs">
          Nobody has these roles yet.
        </Text>
      )}
    </Card>
  )
}

/** Copy-paste settings for common apps, with this Gatehouse's values (the same recipes as docs/LDAP.md). */
function RecipesCard({
  values,
  defaultHost,
  host,
  onHost,
  serviceUids,
  onServiceUid,
}: {
  values: LdapValues
  defaultHost: string
  host: string
  onHost: (host: string) => void
  serviceUids: string[]
  onServiceUid: (uid: string | null) => void
}) {
  const [recipe, setRecipe] = useState<string | null>(RECIPES[0]?.id ?? null)
  const shown = RECIPES.find((r) => r.id === recipe) ?? RECIPES[0]
  return (
    <Card withBorder>
      <Title order={3} size="h4" mb="xs">
        Settings for apps
      </Title>
      <Group grow align="flex-end" mb="sm">
        <TextInput
          label="Host the apps connect to"
          description="Name or address of this server on your network"
          placeholder={defaultHost}
          value={host}
          onChange={(e) => onHost(e.currentTarget.value)}
        />
        <Select
          label="Service user"
          data={serviceUids.length ? serviceUids : [DOC_VALUES.serviceUid]}
          value={values.serviceUid}
          onChange={onServiceUid}
          allowDeselect={false}
        />
        <Select
          label="App"
          data-testid="ldap-recipe-app"
          data={RECIPES.map((r) => ({ value: r.id, label: r.title }))}
          value={shown?.id ?? null}
          onChange={setRecipe}
          allowDeselect={false}
        />
      </Group>
      {!withTls(values) && (
        <Alert color="orange" mb="sm" data-testid="ldap-recipes-plain">
          <Text fw={700} size="sm" component="span">
            Plain LDAP: only for an app on this machine.{' '}
          </Text>
          ldap.tls is not set, so these settings send passwords in clear. Use them only for an app on the Gatehouse machine itself
          (loopback). For apps elsewhere, set ldap.tls with a certificate from your CA (docs/LDAP.md, "TLS: a CA for your LAN"): the
          settings then use StartTLS or LDAPS and the CA.
        </Alert>
      )}
      {shown && (
        <Stack gap="xs" data-testid="ldap-recipe">
          <Text size="sm">{shown.where}.</Text>
          <Code block data-testid={`ldap-recipe-${shown.id}`}>
            {shown.text(values)}
          </Code>
          <Group>
            <CopyButton value={shown.text(values)}>
              {({ copied, copy }) => (
                <Button size="xs" variant="light" onClick={copy}>
                  {copied ? 'Copied' : `Copy ${shown.title} settings`}
                </Button>
              )}
            </CopyButton>
          </Group>
          <Text size="xs" c="dimmed">
            Replace APP_PASSWORD_OF_THE_SERVICE_USER with an app password of the service user. The same recipes are in docs/LDAP.md.
          </Text>
        </Stack>
      )}
    </Card>
  )
}

export default function LdapView() {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  const save = useOpMutation('settings.update')
  const startup = useStartup()
  const queries = useQueryClient()
  const current = useMemo(() => ldapFormOf(settings.data?.effective), [settings.data])
  const [form, setForm] = useState<LdapForm>(LDAP_DEFAULTS)
  const [errors, setErrors] = useState<Record<string, string>>({})
  useEffect(() => setForm(current), [current])
  const [uidsByRole, setUidsByRole] = useState<Record<string, string[]>>({})
  const serviceUids = [...new Set(current.searchRoles.flatMap((r) => uidsByRole[r] ?? []))]
  const [serviceUid, setServiceUid] = useState<string | null>(null)
  const [host, setHost] = useState('')

  if (settings.isPending) return <Loading />
  if (settings.error) return <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />

  const set = <K extends keyof LdapForm>(key: K, value: LdapForm[K]) => setForm((f) => ({ ...f, [key]: value }))
  const listenHost = hostOf(current.address)
  const defaultHost = ['127.0.0.1', '0.0.0.0', '::', '::1', 'localhost', ''].includes(listenHost) ? location.hostname : listenHost
  const values: LdapValues = {
    host: host.trim() || defaultHost,
    port: portOf(current.address, 3890),
    ldapsPort: current.ldapsAddress ? portOf(current.ldapsAddress, 6360) : null,
    startTls: current.tls,
    baseDN: current.baseDN,
    serviceUid: serviceUid ?? serviceUids[0] ?? DOC_VALUES.serviceUid,
  }
  const submit = () => {
    setErrors({})
    // Only the fields changed here, over the values this view read: another admin's change since is refused (409), never undone.
    // Never a key set at start-up: stored, it would not take effect (the server refuses it, 409 SET_AT_STARTUP).
    const changed = changedFields(startup.leaveOut(ldapValues(form)), settings.data?.effective)
    if (!changed) {
      notifications.show({ color: 'gray', title: 'Nothing to save', message: 'No LDAP setting was changed.' })
      return
    }
    save.mutate(changed, {
      onSuccess: () => notifications.show({ color: 'teal', title: 'Saved', message: 'The LDAP settings apply now.' }),
      onError: (e: PanelCallError) => {
        showFieldErrors(e, (field, message) => setErrors((m) => ({ ...m, [field]: message })), FIELD_PATHS, 'Not saved')
        // A refused address is the listener's last error now.
        void queries.invalidateQueries({ queryKey: ['listeners.state'] })
      },
    })
  }
  const fieldError = (key: string) => errors[`ldap.${key}`]

  return (
    <Stack>
      <PageHeader
        title="LDAP"
        description="Apps that speak LDAP (NAS, media servers, Nextcloud, Gitea, Proxmox, Apache) sign people in with their Gatehouse account. Read-only directory: people and groups."
      />
      {!current.present && (
        <Alert
          color="yellow"
          variant="light"
          title={
            <Text fw={700} size="sm" c="dark.9">
              No LDAP server in this build
            </Text>
          }
          data-testid="ldap-absent"
        >
          <Text size="sm" c="dark.9">
            This server has no <Code>ldap</Code> settings yet; the values below are the defaults it would start with.
          </Text>
        </Alert>
      )}
      <ListenerStates names={['ldap', 'ldaps']} testId="ldap-listener-states" />
      <ListenerCard
        form={form}
        set={set}
        present={current.present}
        saving={save.isPending}
        fieldError={fieldError}
        onSubmit={submit}
        startup={startup}
      />
      <ServiceUsersCard
        roles={current.searchRoles}
        nobody={serviceUids.length === 0}
        onUids={(r, uids) => setUidsByRole((m) => ({ ...m, [r]: uids }))}
      />
      <RecipesCard
        values={values}
        defaultHost={defaultHost}
        host={host}
        onHost={setHost}
        serviceUids={serviceUids}
        onServiceUid={setServiceUid}
      />
      <LdapTestBox baseDN={current.baseDN} serviceUids={serviceUids} />
    </Stack>
  )
}
