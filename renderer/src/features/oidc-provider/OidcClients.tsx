import { Card, Stack, Switch } from '@mantine/core'
import { useState } from 'react'
import { Editable } from '../../access'
import { useOp, useOpMutation, useRereading } from '../../api'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { useDeepLink } from '../../deep-link'
import { AccessModal, EditClientModal, SecretModal, type ShownSecret } from './ClientModals'
import { ClientsTable } from './ClientsTable'
import { CreateClient } from './CreateClient'
import { useStartup } from '../../startup'
import { ProviderSettings } from './ProviderSettings'
import { RegistrationTokens } from './RegistrationTokens'

/**
 * The Single sign-on view: the provider's switch, its settings (groups claim, lifetimes), the
 * registration form, the clients, and the initial access tokens of dynamic client registration.
 */
export default function OidcClientsPage() {
  const clients = useOp('oidc.clients', {})
  const tokens = useOp('oidc.registrationTokens', {})
  const configure = useOpMutation('oidc.configure')
  const rereading = useRereading('oidc.clients')
  // `#/sso/<clientId>`: the client's own address (issue 31 §3), opening its access dialog.
  const [linked, openClient, closeClient] = useDeepLink('sso')
  const [shown, setShown] = useState<ShownSecret | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  // Keys set at start-up are read-only here, with the badge and the reason (renderer/src/startup.tsx).
  const startup = useStartup()
  if (!clients.data) return clients.error ? <ErrorNotice error={clients.error} onRetry={() => void clients.refetch()} /> : <Loading />
  const { issuer, enabled } = clients.data
  const edited = editing ? (clients.data.clients.find((c) => c.clientId === editing) ?? null) : null
  const access = linked ? (clients.data.clients.find((c) => c.clientId === linked) ?? null) : null
  const refetch = () => {
    void clients.refetch()
    void tokens.refetch()
  }
  const registered = new Map<string, number>()
  for (const c of clients.data.clients)
    if (c.registeredByToken) registered.set(c.registeredByToken, (registered.get(c.registeredByToken) ?? 0) + 1)
  const tokenLabels = new Map((tokens.data?.tokens ?? []).map((t) => [t.id, t.label]))
  return (
    <Stack>
      <PageHeader
        title="Single sign-on"
        description="Gatehouse as an OpenID Connect provider: Grafana, Gitea, Nextcloud, Immich and other apps sign their users in here."
      />
      <Card withBorder>
        <Editable op="oidc.configure" note>
          <Switch
            {...startup.field('oidcProvider.enabled', {
              label: `OpenID Connect provider enabled (discovery at ${issuer}/.well-known/openid-configuration)`,
            })}
            checked={enabled}
            disabled={configure.isPending || rereading}
            onChange={(e) =>
              startup.of('oidcProvider.enabled') ||
              configure.mutate({ patch: { enabled: e.currentTarget.checked } }, { onSuccess: () => void clients.refetch() })
            }
            data-testid="oidc-enabled"
          />
          <ErrorNotice error={configure.error} />
        </Editable>
      </Card>
      <ProviderSettings />
      <CreateClient
        issuer={issuer}
        onCreated={(s) => {
          setShown(s)
          void clients.refetch()
        }}
      />
      <ClientsTable
        clients={clients.data.clients}
        tokenLabels={tokenLabels}
        onChanged={refetch}
        onRotated={setShown}
        onAccess={openClient}
        onEdit={setEditing}
      />
      {tokens.data ? (
        <RegistrationTokens data={tokens.data} issuer={issuer} registered={registered} onChanged={refetch} />
      ) : (
        <ErrorNotice error={tokens.error} onRetry={() => void tokens.refetch()} />
      )}
      <SecretModal shown={shown} issuer={issuer} onClose={() => setShown(null)} />
      <EditClientModal
        client={edited}
        onClose={() => {
          setEditing(null)
          void clients.refetch()
        }}
      />
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
