import { Badge, Button, Group, Stack, Table, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { IconShieldOff } from '@tabler/icons-react'
import { type PanelCallError, useOp, useOpMutation } from '../../api'
import { ConfirmButton, ErrorNotice, Loading } from '../../components/common'
import { dateTime } from '../../format'
import { PasskeyTable } from '../passkey/PasskeyTable'
import { Allowed } from '../../access'

const failed = (title: string) => (e: PanelCallError) => notifications.show({ color: 'red', title, message: e.message })
const done = (message: string) => notifications.show({ color: 'teal', title: 'Done', message })

/** A user's second factors and passkeys (Users drawer): reset two-factor, remove a passkey, restart the enrolment grace. */
export function UserSecondFactors({ userId, email }: { userId: string; email: string }) {
  const factors = useOp('twoFactor.userFactors', { userId })
  const reset = useOpMutation('twoFactor.reset')
  const grace = useOpMutation('twoFactor.resetGrace')
  if (factors.isPending) return <Loading />
  if (factors.error) return <ErrorNotice error={factors.error} onRetry={() => void factors.refetch()} />
  const f = factors.data
  return (
    <Stack gap="sm" data-testid="second-factors">
      <Table>
        <Table.Tbody>
          <Table.Tr>
            <Table.Td>Two-factor</Table.Td>
            <Table.Td>
              {/* Filled badges with white text need the palette's darkest shades for 4.5:1 (teal 6 gave 3.11:1). */}
              {f.twoFactorEnabled ? <Badge color="teal.9">on</Badge> : <Badge color="gray.7">off</Badge>}{' '}
              {f.totp === 'pending' && (
                <Badge color="yellow" autoContrast>
                  authenticator not confirmed
                </Badge>
              )}
              {f.totp === 'verified' && <Badge variant="light">authenticator app</Badge>}
            </Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Td>Backup codes left</Table.Td>
            <Table.Td>{f.backupCodesLeft ?? '—'}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Td>Trusted browsers</Table.Td>
            <Table.Td>{f.trustedDevices}</Table.Td>
          </Table.Tr>
          {f.graceDeadline !== null && (
            <Table.Tr>
              <Table.Td>Must enrol by</Table.Td>
              <Table.Td>
                <Group gap="xs">
                  <Text size="sm">{dateTime(f.graceDeadline)}</Text>
                  <Allowed op="twoFactor.resetGrace">
                    <Button
                      size="compact-xs"
                      variant="subtle"
                      loading={grace.isPending}
                      onClick={() =>
                        grace.mutate(
                          { userId },
                          { onSuccess: () => done('The grace period starts again at the next sign-in'), onError: failed('Not changed') },
                        )
                      }
                    >
                      Restart grace period
                    </Button>
                  </Allowed>
                </Group>
              </Table.Td>
            </Table.Tr>
          )}
        </Table.Tbody>
      </Table>
      {(f.twoFactorEnabled || f.totp !== 'none') && (
        <Group>
          <Allowed op="twoFactor.reset">
            <ConfirmButton
              label="Reset two-factor"
              leftSection={<IconShieldOff size={14} />}
              title={`Reset two-factor of ${email}`}
              message="Removes the authenticator app, the backup codes and every trusted browser. The user is told by mail and can sign in with the password alone until they enrol again."
              confirmLabel="Reset"
              loading={reset.isPending}
              testId="reset-two-factor"
              onConfirm={() =>
                reset.mutate({ userId }, { onSuccess: () => done(`Two-factor of ${email} is reset`), onError: failed('Not reset') })
              }
            />
          </Allowed>
        </Group>
      )}
      <Text fw={500} size="sm">
        Passkeys ({f.passkeys.length})
      </Text>
      <PasskeyTable userId={userId} passkeys={f.passkeys} />
    </Stack>
  )
}
