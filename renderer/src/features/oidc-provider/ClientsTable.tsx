import { Badge, type BadgeProps, Button, Code, Group, Select, Stack, Switch, Table, Text } from '@mantine/core'
import type { ReactNode } from 'react'
import type { OidcClientView } from '../../../../server/features/oidc-provider/panel-contract'
import { Allowed, Editable } from '../../access'
import { useOpMutation, useRereading } from '../../api'
import { ConfirmButton, ErrorNotice } from '../../components/common'
import { dateTime } from '../../format'
import { ID_TOKEN_ALGS, type IdTokenAlg } from './ClientFields'
import type { ShownSecret } from './ClientModals'

/** A URI in the table: broken anywhere, so a long one wraps instead of squeezing the other columns. */
const uriStyle = { wordBreak: 'break-all' } as const

/** A Kind badge: its text wraps inside it rather than being cut to a few letters in a narrow column. */
function KindBadge(props: BadgeProps & { children: ReactNode; 'data-testid'?: string; title?: string }) {
  return <Badge h="auto" py={2} styles={{ label: { whiteSpace: 'normal', overflow: 'visible' } }} {...props} />
}

/** A client's token settings, changed in place: the ID token algorithm and the resource-server switch. */
export function TokenSettings({ client, onChanged }: { client: OidcClientView; onChanged: () => void }) {
  const update = useOpMutation('oidc.updateClient')
  const rereading = useRereading('oidc.clients')
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
          disabled={update.isPending || rereading}
          onChange={(v) =>
            v &&
            update.mutate(
              {
                clientId: client.clientId,
                idTokenSignedResponseAlg: v as IdTokenAlg,
                base: { idTokenSignedResponseAlg: client.idTokenSignedResponseAlg },
              },
              { onSuccess: onChanged },
            )
          }
          data-testid={`oidc-alg-${client.clientId}`}
        />
        <Switch
          size="xs"
          label="resource server"
          checked={client.resourceServer}
          disabled={update.isPending || rereading}
          onChange={(e) =>
            update.mutate(
              { clientId: client.clientId, resourceServer: e.currentTarget.checked, base: { resourceServer: client.resourceServer } },
              { onSuccess: onChanged },
            )
          }
          data-testid={`oidc-rs-${client.clientId}`}
        />
        <ErrorNotice error={update.error} />
      </Stack>
    </Editable>
  )
}

/** What kind of client it is and what sets it apart, as badges. */
function ClientBadges({ client: c, tokenLabel }: { client: OidcClientView; tokenLabel?: string | null }) {
  return (
    <Group gap={4} data-testid={`oidc-kind-${c.clientId}`}>
      <KindBadge variant="light">{c.public ? 'public' : 'confidential'}</KindBadge>
      {c.pkceRequired ? null : (
        <KindBadge variant="light" color="yellow">
          PKCE optional
        </KindBadge>
      )}
      {c.skipConsent ? (
        <KindBadge variant="light" color="gray">
          no consent
        </KindBadge>
      ) : null}
      {c.allowedOrganizations.length + c.allowedTeams.length > 0 ? (
        <KindBadge variant="light" color="grape">
          restricted
        </KindBadge>
      ) : null}
      {c.subjectType === 'pairwise' ? (
        <KindBadge variant="light" color="cyan" data-testid={`oidc-pairwise-${c.clientId}`}>
          pairwise sub
        </KindBadge>
      ) : null}
      {c.backchannelLogoutUri && c.backchannelFailingSince === null ? (
        <KindBadge variant="light" color="teal">
          back-channel logout
        </KindBadge>
      ) : null}
      {c.backchannelLogoutUri && c.backchannelFailingSince !== null ? (
        <KindBadge
          variant="filled"
          color="red"
          title={`${c.backchannelLogoutUri}: ${c.backchannelLastError ?? ''}`}
          data-testid={`oidc-backchannel-failing-${c.clientId}`}
        >
          back-channel logout failing since {dateTime(c.backchannelFailingSince)}
        </KindBadge>
      ) : null}
      {c.backchannelLogoutUri && c.backchannelFailingSince !== null && c.backchannelLastError ? (
        <Text size="xs" c="red" data-testid={`oidc-backchannel-error-${c.clientId}`}>
          {c.backchannelLastError}
        </Text>
      ) : null}
      {c.requirePar ? (
        <KindBadge variant="light" color="blue">
          PAR required
        </KindBadge>
      ) : null}
      {c.registeredByToken ? (
        <KindBadge variant="light" color="orange" data-testid={`oidc-registered-${c.clientId}`}>
          registered by token {c.registeredByToken}
          {tokenLabel ? ` (${tokenLabel})` : ''}
        </KindBadge>
      ) : null}
    </Group>
  )
}

/** A client's buttons: its edit dialog, its access dialog, a new secret (confidential clients), delete. */
function ClientActions({
  client: c,
  onEdit,
  onAccess,
  onRotated,
  onDeleted,
}: {
  client: OidcClientView
  onEdit: () => void
  onAccess: () => void
  onRotated: (shown: ShownSecret) => void
  onDeleted: () => void
}) {
  const rotate = useOpMutation('oidc.rotateSecret')
  const remove = useOpMutation('oidc.deleteClient')
  return (
    <Stack gap={4}>
      <Group gap={4} justify="flex-end">
        <Button size="xs" variant="light" onClick={onEdit} aria-label={`Edit ${c.name}`} data-testid={`oidc-edit-${c.clientId}`}>
          Edit
        </Button>
        <Button size="xs" variant="light" onClick={onAccess} data-testid={`oidc-access-${c.clientId}`}>
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
              onConfirm={() => rotate.mutate({ clientId: c.clientId }, { onSuccess: onRotated })}
            />
          </Allowed>
        )}
        <Allowed op="oidc.deleteClient">
          <ConfirmButton
            label="Delete"
            title={`Delete ${c.name}`}
            message="The application can no longer sign users in; its tokens stop working."
            confirmLabel="Delete"
            onConfirm={() => remove.mutate({ clientId: c.clientId }, { onSuccess: onDeleted })}
          />
        </Allowed>
      </Group>
      <ErrorNotice error={rotate.error ?? remove.error} />
    </Stack>
  )
}

/**
 * The registered applications. A self-registered one (RFC 7591) says which initial access token
 * registered it, with the token's label when the list of tokens is at hand.
 */
export function ClientsTable({
  clients,
  tokenLabels,
  onChanged,
  onRotated,
  onAccess,
  onEdit,
}: {
  clients: OidcClientView[]
  tokenLabels: Map<string, string | null>
  onChanged: () => void
  onRotated: (shown: ShownSecret) => void
  onAccess: (clientId: string) => void
  onEdit: (clientId: string) => void
}) {
  if (clients.length === 0) return <Text c="dimmed">No application yet.</Text>
  return (
    <Table striped data-testid="oidc-clients">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Application</Table.Th>
          <Table.Th>Redirect and logout URIs</Table.Th>
          <Table.Th miw={170}>Kind</Table.Th>
          <Table.Th>Tokens</Table.Th>
          <Table.Th>Created</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {clients.map((c) => (
          <Table.Tr key={c.clientId}>
            <Table.Td>
              <Stack gap={2}>
                <Text size="sm" fw={500}>
                  {c.name}
                </Text>
                <Code style={uriStyle}>{c.clientId}</Code>
              </Stack>
            </Table.Td>
            <Table.Td>
              <Stack gap={2}>
                {c.redirectUris.map((u) => (
                  <Code key={u} style={uriStyle}>
                    {u}
                  </Code>
                ))}
                {c.backchannelLogoutUri ? (
                  <Text size="xs" data-testid={`oidc-backchannel-${c.clientId}`}>
                    Back-channel logout: <Code style={uriStyle}>{c.backchannelLogoutUri}</Code>
                  </Text>
                ) : null}
                {c.postLogoutRedirectUris.length > 0 ? (
                  <Text size="xs">
                    After logout:{' '}
                    {c.postLogoutRedirectUris.map((u) => (
                      <Code key={u} style={uriStyle}>
                        {u}
                      </Code>
                    ))}
                  </Text>
                ) : null}
              </Stack>
            </Table.Td>
            <Table.Td>
              <ClientBadges client={c} tokenLabel={c.registeredByToken ? tokenLabels.get(c.registeredByToken) : null} />
            </Table.Td>
            <Table.Td>
              <TokenSettings client={c} onChanged={onChanged} />
            </Table.Td>
            <Table.Td>{dateTime(c.createdAt)}</Table.Td>
            <Table.Td>
              <ClientActions
                client={c}
                onEdit={() => onEdit(c.clientId)}
                onAccess={() => onAccess(c.clientId)}
                onRotated={onRotated}
                onDeleted={onChanged}
              />
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}
