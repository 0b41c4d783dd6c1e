import { Badge, Card, Code, Group, Select, Stack, Switch, Table, Text } from '@mantine/core'
import { IconRefresh } from '@tabler/icons-react'
import { useOp, useOpMutation, useRereading } from '../../api'
import { ConfirmButton, ErrorNotice, Loading, PageHeader } from '../../components/common'
import { dateTime, duration } from '../../format'
import { Allowed, Editable } from '../../access'

function Settings() {
  const settings = useOp('jwt.settings', {})
  const configure = useOpMutation('jwt.configure')
  const rereading = useRereading('jwt.settings')
  if (!settings.data) return settings.error ? <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} /> : <Loading />
  const s = settings.data as { enabled: boolean; jwks: { keyPairConfig: { alg: string } } }
  return (
    <Card withBorder>
      <Editable op="jwt.configure">
        <Group align="flex-end">
          <Switch
            label="JWT enabled (GET /token, GET /jwks, set-auth-jwt on get-session)"
            checked={s.enabled}
            disabled={configure.isPending || rereading}
            onChange={(e) => configure.mutate({ patch: { enabled: e.currentTarget.checked }, base: { 'jwt.enabled': s.enabled } })}
            data-testid="jwt-enabled"
          />
          <Select
            label="Algorithm of new keys"
            data={['EdDSA', 'ES256', 'RS256']}
            value={s.jwks.keyPairConfig.alg}
            allowDeselect={false}
            disabled={configure.isPending || rereading}
            onChange={(alg) =>
              alg &&
              configure.mutate({
                patch: { jwks: { keyPairConfig: { alg } } },
                base: { 'jwt.jwks.keyPairConfig.alg': s.jwks.keyPairConfig.alg },
              })
            }
            data-testid="jwt-alg"
          />
        </Group>
      </Editable>
      <ErrorNotice error={configure.error} />
    </Card>
  )
}

export default function SigningKeysPage() {
  const keys = useOp('jwt.keys', {})
  const rotate = useOpMutation('jwt.rotate')
  return (
    <Stack>
      <PageHeader
        title="Signing keys"
        description="Keys that sign the JWTs apps verify offline against /jwks. Private keys are encrypted at rest."
        actions={
          <Allowed op="jwt.rotate">
            <ConfirmButton
              label="Rotate"
              leftSection={<IconRefresh size={14} />}
              color="indigo"
              variant="filled"
              size="sm"
              title="Rotate the signing key"
              message={`A new key signs from now on. The current one stays in the JWKS for ${duration(keys.data?.gracePeriod ?? 0)} so tokens it signed keep verifying, then it is removed.`}
              confirmLabel="Rotate"
              onConfirm={() => rotate.mutate({})}
              loading={rotate.isPending}
              testId="jwt-rotate"
            />
          </Allowed>
        }
      />
      <Settings />
      <ErrorNotice error={keys.error ?? rotate.error} />
      {!keys.data ? (
        <Loading />
      ) : keys.data.keys.length === 0 ? (
        <Text c="dimmed">No key yet: the first token or JWKS request creates one.</Text>
      ) : (
        <Table striped data-testid="jwt-keys">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Key id (kid)</Table.Th>
              <Table.Th>Algorithm</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>State</Table.Th>
              <Table.Th>Leaves the JWKS</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {keys.data.keys.map((k) => (
              <Table.Tr key={k.id}>
                <Table.Td>
                  <Code>{k.id}</Code>
                </Table.Td>
                <Table.Td>
                  {k.alg}
                  {k.crv ? ` (${k.crv})` : ''}
                </Table.Td>
                <Table.Td>{dateTime(k.createdAt)}</Table.Td>
                <Table.Td>
                  <Badge color={k.signing ? 'teal' : k.retiredAt ? 'gray' : 'blue'} variant="light">
                    {k.signing ? 'signing' : k.retiredAt ? 'retired' : 'published'}
                  </Badge>
                </Table.Td>
                <Table.Td>{k.removedAt ? dateTime(k.removedAt) : '—'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  )
}
