import { Alert, Badge, Button, Card, Code, Group, NumberInput, Select, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core'
import { IconAlertTriangle, IconPlus } from '@tabler/icons-react'
import { useState } from 'react'
import type { RegistrationTokenView } from '../../../../server/features/oidc-provider/panel-contract'
import { Allowed, Editable } from '../../access'
import { useOpMutation, useRereading } from '../../api'
import { ConfirmButton, ErrorNotice } from '../../components/common'
import { useStartup } from '../../startup'
import { dateTime } from '../../format'
import { ink } from '../../ink'
import { Copyable, ShownOnceModal } from './Copyable'

/**
 * Initial access tokens for dynamic client registration (RFC 7591, issue 38): whether registration
 * is on (`oidcProvider.registration.enabled`), the tokens (never the tokens themselves: only their
 * hash is stored), a form creating one (its token shown once) and a revoke behind a confirmation.
 * A view-only admin sees the list without the form and the revoke buttons.
 */

const EXPIRIES = [
  ['', 'Never'],
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '7 days'],
  ['2592000', '30 days'],
  ['31536000', '1 year'],
] as const

export interface Tokens {
  tokens: RegistrationTokenView[]
  enabled: boolean
}

/** The token just created: shown this once, with copy buttons; only Done closes it (the token would be lost). */
function NewTokenModal({
  shown,
  endpoint,
  onClose,
}: {
  shown: { token: string; id: string } | null
  endpoint: string
  onClose: () => void
}) {
  if (!shown) return null
  return (
    <ShownOnceModal title={`Registration token ${shown.id}: copy it now`}>
      <Alert
        color="red"
        variant="light"
        icon={<IconAlertTriangle />}
        title="Shown this once"
        styles={{ title: { color: ink.danger } }}
        data-testid="oidc-regtoken-warning"
      >
        Only its hash is stored: it cannot be shown again. Anyone holding it can register an application until it expires, its uses run out
        or you revoke it.
      </Alert>
      <Copyable label="Token" value={shown.token} testId="oidc-regtoken-new" />
      <Copyable label="Register at" value={endpoint} testId="oidc-regtoken-endpoint" />
      <Text size="sm" c="dimmed">
        The application sends it as <Code>Authorization: Bearer …</Code> with its metadata (RFC 7591).
      </Text>
      <Button onClick={onClose} data-testid="oidc-regtoken-done">
        Done
      </Button>
    </ShownOnceModal>
  )
}

function CreateToken({ onCreated }: { onCreated: (shown: { token: string; id: string }) => void }) {
  const create = useOpMutation('oidc.createRegistrationToken')
  const [label, setLabel] = useState('')
  const [expiresIn, setExpiresIn] = useState<string>('86400')
  const [uses, setUses] = useState<number | ''>(1)
  return (
    <Stack gap="xs">
      <Group align="flex-end">
        <TextInput
          label="Label (optional)"
          description="What or who it is for"
          value={label}
          onChange={(e) => setLabel(e.currentTarget.value)}
          error={create.error?.messageFor('label')}
          data-testid="oidc-regtoken-label"
        />
        <Select
          label="Expires in"
          description=" "
          w={140}
          data={EXPIRIES.map(([value, name]) => ({ value, label: name }))}
          value={expiresIn}
          onChange={(v) => setExpiresIn(v ?? '')}
          allowDeselect={false}
          data-testid="oidc-regtoken-expires"
        />
        <NumberInput
          label="Uses"
          description="Empty: unlimited"
          w={140}
          min={1}
          allowDecimal={false}
          value={uses}
          onChange={(v) => setUses(v === '' ? '' : Number(v))}
          error={create.error?.messageFor('uses')}
          data-testid="oidc-regtoken-uses"
        />
        <Button
          leftSection={<IconPlus size={14} />}
          loading={create.isPending}
          data-testid="oidc-regtoken-create"
          onClick={() =>
            create.mutate(
              { label: label.trim() || null, expiresIn: expiresIn ? Number(expiresIn) : null, uses: uses === '' ? null : uses },
              {
                onSuccess: (answer) => {
                  setLabel('')
                  onCreated({ token: answer.token, id: answer.registrationToken.id })
                },
              },
            )
          }
        >
          Create token
        </Button>
      </Group>
      <ErrorNotice error={create.error && !create.error.field ? create.error : null} />
    </Stack>
  )
}

function stateOf(t: RegistrationTokenView): [string, string] {
  if (t.revokedAt !== null) return ['revoked', 'gray']
  if (t.active) return ['active', 'teal']
  return [t.usesLeft === 0 ? 'used up' : 'expired', 'yellow']
}

function TokensTable({
  tokens,
  registered,
  onRevoked,
}: {
  tokens: RegistrationTokenView[]
  registered: Map<string, number>
  onRevoked: () => void
}) {
  const revoke = useOpMutation('oidc.revokeRegistrationToken')
  if (tokens.length === 0) return <Text c="dimmed">No registration token yet.</Text>
  return (
    <>
      <Table striped data-testid="oidc-regtokens">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Token</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Created by</Table.Th>
            <Table.Th>Expires</Table.Th>
            <Table.Th>Uses left</Table.Th>
            <Table.Th>Clients</Table.Th>
            <Table.Th>State</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {tokens.map((t) => {
            const [state, color] = stateOf(t)
            return (
              <Table.Tr key={t.id} data-testid={`oidc-regtoken-${t.id}`}>
                <Table.Td>
                  <Code>{t.id}</Code>
                  {t.label ? <Text size="sm">{t.label}</Text> : null}
                </Table.Td>
                <Table.Td>{dateTime(t.createdAt)}</Table.Td>
                <Table.Td>{t.createdBy ?? '—'}</Table.Td>
                <Table.Td>{t.expiresAt === null ? 'never' : dateTime(t.expiresAt)}</Table.Td>
                <Table.Td>
                  {t.usesLeft === null ? 'unlimited' : t.usesLeft} ({t.used} used)
                </Table.Td>
                <Table.Td>{registered.get(t.id) ?? 0}</Table.Td>
                <Table.Td>
                  <Badge variant="light" color={color}>
                    {state}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  {t.revokedAt === null ? (
                    <Allowed op="oidc.revokeRegistrationToken" hide>
                      <ConfirmButton
                        label="Revoke"
                        title={`Revoke registration token ${t.id}?`}
                        message="Applications holding it can no longer register. The clients it registered stay."
                        confirmLabel="Revoke"
                        testId={`oidc-regtoken-revoke-${t.id}`}
                        onConfirm={() => revoke.mutate({ id: t.id }, { onSuccess: onRevoked })}
                      />
                    </Allowed>
                  ) : null}
                </Table.Td>
              </Table.Tr>
            )
          })}
        </Table.Tbody>
      </Table>
      <ErrorNotice error={revoke.error} />
    </>
  )
}

export function RegistrationTokens({
  data,
  issuer,
  registered,
  onChanged,
}: {
  data: Tokens
  issuer: string
  /** How many clients each token registered. */
  registered: Map<string, number>
  onChanged: () => void
}) {
  const configure = useOpMutation('oidc.configure')
  const rereading = useRereading('oidc.registrationTokens')
  const [shown, setShown] = useState<{ token: string; id: string } | null>(null)
  // Set at start-up, the switch is read-only with the badge and the reason: a change would not take effect.
  const startup = useStartup()
  const fixed = startup.of('oidcProvider.registration.enabled')
  return (
    <Card withBorder data-testid="oidc-registration">
      <Stack gap="sm">
        <Title order={3} size="h4">
          Applications that register themselves
        </Title>
        <Editable op="oidc.configure">
          <Switch
            {...startup.field('oidcProvider.registration.enabled', {
              label: 'Dynamic client registration (oidcProvider.registration.enabled)',
              description: `An application holding a token below registers itself at ${issuer}/oauth2/register (RFC 7591)`,
            })}
            checked={data.enabled}
            disabled={configure.isPending || rereading}
            onChange={(e) =>
              fixed ||
              configure.mutate(
                {
                  patch: { registration: { enabled: e.currentTarget.checked } },
                  // As this view read it: another admin's change since is refused (409), not overwritten.
                  base: { 'oidcProvider.registration.enabled': data.enabled },
                },
                { onSuccess: onChanged },
              )
            }
            data-testid="oidc-registration-enabled"
          />
        </Editable>
        <ErrorNotice error={configure.error} />
        {data.enabled ? null : (
          <Text size="sm" c="dimmed" data-testid="oidc-registration-off">
            Registration is off: tokens can be made, but every registration is refused until it is switched on.
          </Text>
        )}
        <Allowed op="oidc.createRegistrationToken" hide>
          <CreateToken
            onCreated={(s) => {
              setShown(s)
              onChanged()
            }}
          />
        </Allowed>
        <TokensTable tokens={data.tokens} registered={registered} onRevoked={onChanged} />
      </Stack>
      <NewTokenModal shown={shown} endpoint={`${issuer}/oauth2/register`} onClose={() => setShown(null)} />
    </Card>
  )
}
