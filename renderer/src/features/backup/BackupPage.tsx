import {
  Alert,
  Anchor,
  Button,
  Card,
  Code,
  Group,
  List,
  Modal,
  NumberInput,
  Progress,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { IconAlertTriangle, IconDatabaseExport, IconDeviceFloppy, IconDownload, IconRestore, IconTrash } from '@tabler/icons-react'
import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useState } from 'react'
import { type PanelCallError, transport, useOp, useOpMutation } from '../../api'
import { Allowed, Editable, useAccess } from '../../access'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { bytes, dateTime } from '../../format'

type Schedule = 'off' | 'hourly' | 'daily' | 'weekly'

const plural = (n: number | undefined, noun: string): string => (n === undefined ? `? ${noun}s` : `${n} ${noun}${n === 1 ? '' : 's'}`)

const SCHEDULES: Array<{ value: Schedule; label: string }> = [
  { value: 'off', label: 'Off (manual backups only)' },
  { value: 'hourly', label: 'Every hour' },
  { value: 'daily', label: 'Every day' },
  { value: 'weekly', label: 'Every week' },
]

function ScheduleForm({ schedule, keep }: { schedule: Schedule; keep: number }) {
  const save = useOpMutation('backup.schedule')
  const [value, setValue] = useState<Schedule>(schedule)
  const [count, setCount] = useState<number>(keep)
  return (
    <Card withBorder>
      <Title order={4} mb="xs">
        Schedule
      </Title>
      <Editable op="backup.schedule">
        <Group align="flex-end">
          <Select
            label="Take a backup"
            description="The server writes it into the backups folder by itself."
            data={SCHEDULES}
            value={value}
            onChange={(v) => v && setValue(v as Schedule)}
            allowDeselect={false}
            data-testid="backup-schedule"
          />
          <NumberInput
            label="Scheduled backups to keep"
            description="Older ones are deleted; manual backups are kept."
            min={1}
            max={1000}
            value={count}
            onChange={(v) => setCount(typeof v === 'number' ? v : keep)}
            data-testid="backup-keep"
          />
          <Button
            leftSection={<IconDeviceFloppy size={16} />}
            loading={save.isPending}
            onClick={async () => {
              try {
                await save.mutateAsync({ schedule: value, keep: count })
                notifications.show({
                  color: 'teal',
                  title: 'Schedule saved',
                  message:
                    value === 'off'
                      ? 'No scheduled backups.'
                      : `Backups ${SCHEDULES.find((s) => s.value === value)?.label.toLowerCase()}, keeping ${count}.`,
                })
              } catch (e) {
                notifications.show({ color: 'red', title: 'Not saved', message: (e as PanelCallError).message })
              }
            }}
            data-testid="backup-schedule-save"
          >
            Save schedule
          </Button>
        </Group>
      </Editable>
    </Card>
  )
}

function CreateNow({ running }: { running: boolean }) {
  const create = useOpMutation('backup.create')
  const [following, setFollowing] = useState(running)
  const status = useOp('backup.status', {}, { refetchInterval: following ? 300 : false })
  const job = status.data
  const client = useQueryClient()
  useEffect(() => {
    if (following && job && !job.running) {
      setFollowing(false)
      // The list shows the new file (or still not, if it failed).
      void client.invalidateQueries({ queryKey: ['backup.list'] })
      if (job.phase === 'done') notifications.show({ color: 'teal', title: 'Backup written', message: job.name ?? '' })
      else if (job.phase === 'failed') notifications.show({ color: 'red', title: 'Backup failed', message: job.error ?? '' })
    }
  }, [following, job, client])
  const busy = following && (job?.running ?? true)
  return (
    <Stack gap="xs">
      <Allowed op="backup.create">
        <Button
          leftSection={<IconDatabaseExport size={16} />}
          loading={create.isPending}
          disabled={busy}
          onClick={async () => {
            try {
              await create.mutateAsync({})
              setFollowing(true)
            } catch (e) {
              notifications.show({ color: 'red', title: 'Backup not started', message: (e as PanelCallError).message })
            }
          }}
          data-testid="backup-create"
        >
          Back up now
        </Button>
      </Allowed>
      {busy && job && (
        <Progress value={Math.round(job.fraction * 100)} animated aria-label="Backup progress" data-testid="backup-progress" />
      )}
    </Stack>
  )
}

function RestoreModal({ name, onClose }: { name: string; onClose: () => void }) {
  const plan = useOp('backup.restorePlan', { name })
  const restore = useOpMutation('backup.restore')
  const [typed, setTyped] = useState('')
  const [done, setDone] = useState<string | null>(null)
  return (
    <Modal opened onClose={onClose} title="Restore this backup?" size="lg">
      {plan.isLoading && <Loading />}
      <ErrorNotice error={plan.error} />
      {done && (
        <Alert color="teal" title="Restore staged" data-testid="restore-staged">
          {done}
        </Alert>
      )}
      {plan.data && !done && (
        <Stack gap="sm">
          <Text size="sm">
            The backup <Code>{name}</Code> of {dateTime(plan.data.backup.createdAt)} ({plural(plan.data.backup.rowCounts?.user, 'user')}) is
            checked first (checksums, integrity, schema version). At the next start of Gatehouse it replaces, in{' '}
            <Code>{plan.data.dataDir}</Code>:
          </Text>
          <List size="sm" data-testid="restore-replaces">
            {plan.data.replaces.map((file) => (
              <List.Item key={file}>
                <Code>{file}</Code>
              </List.Item>
            ))}
          </List>
          <Text size="sm">
            Today's data ({plural(plan.data.current.user ?? 0, 'user')}, {plural(plan.data.current.session ?? 0, 'session')}) is kept aside
            until the restored data has started once. Everything written after the backup is lost.
          </Text>
          <TextInput
            label="Type the backup name to confirm"
            value={typed}
            onChange={(e) => setTyped(e.currentTarget.value)}
            data-testid="restore-confirm"
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button
              color="red"
              leftSection={<IconRestore size={16} />}
              disabled={typed !== name}
              loading={restore.isPending}
              onClick={async () => {
                try {
                  const result = await restore.mutateAsync({ name, confirm: typed })
                  setDone(result.message)
                } catch (e) {
                  notifications.show({ color: 'red', title: 'Restore refused', message: (e as PanelCallError).message })
                }
              }}
              data-testid="restore-submit"
            >
              Restore at next start
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  )
}

export default function BackupPage() {
  const list = useOp('backup.list', {})
  const remove = useOpMutation('backup.delete')
  const access = useAccess()
  const [restoring, setRestoring] = useState<string | null>(null)
  if (list.isLoading) return <Loading />
  if (list.error || !list.data) return <ErrorNotice error={list.error} onRetry={() => list.refetch()} />
  const data = list.data
  return (
    <>
      <PageHeader
        title="Backups"
        description="Online snapshots of the database with the stored configuration and the secret, one .tar.gz each."
        actions={<CreateNow running={data.job?.running ?? false} />}
      />
      <Stack gap="lg">
        {data.pendingRestore && (
          <Alert color="orange" icon={<IconAlertTriangle size={18} />} title="Restore waiting for a restart" data-testid="pending-restore">
            The backup {data.pendingRestore.archive} ({dateTime(data.pendingRestore.createdAt)}) replaces the current data at the next start
            of Gatehouse.
          </Alert>
        )}
        <ScheduleForm schedule={data.schedule} keep={data.keep} />
        <Card withBorder>
          <Title order={4} mb={4}>
            Backups
          </Title>
          <Text size="sm" mb="sm">
            Folder: <Code>{data.directory}</Code>. Restore one from the command line with <Code>gatehouse restore FILE --data-dir DIR</Code>
            , or here.
          </Text>
          {data.backups.length === 0 ? (
            <Text size="sm" data-testid="backups-empty">
              No backups yet.
            </Text>
          ) : (
            <Table striped data-testid="backups-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Taken</Table.Th>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th>Size</Table.Th>
                  <Table.Th>Users</Table.Th>
                  <Table.Th>Sessions</Table.Th>
                  <Table.Th>Schema</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.backups.map((b) => (
                  <Table.Tr key={b.name} data-testid="backup-row">
                    <Table.Td title={b.name}>{dateTime(b.createdAt)}</Table.Td>
                    <Table.Td>{b.kind === 'scheduled' ? 'Scheduled' : 'Manual'}</Table.Td>
                    <Table.Td>{bytes(b.size)}</Table.Td>
                    <Table.Td>{b.rowCounts?.user ?? '—'}</Table.Td>
                    <Table.Td>{b.rowCounts?.session ?? '—'}</Table.Td>
                    <Table.Td>{b.schemaVersion ?? 'unreadable'}</Table.Td>
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        {transport() === 'http' && !access.viewOnly && (
                          <Anchor
                            href={`./panel/download/backup/${encodeURIComponent(b.name)}`}
                            download={b.name}
                            size="sm"
                            aria-label={`Download ${b.name}`}
                          >
                            <Group gap={4} wrap="nowrap">
                              <IconDownload size={16} /> Download
                            </Group>
                          </Anchor>
                        )}
                        <Allowed op="backup.restore">
                          <Button
                            size="compact-sm"
                            variant="light"
                            color="orange"
                            leftSection={<IconRestore size={14} />}
                            onClick={() => setRestoring(b.name)}
                          >
                            Restore
                          </Button>
                        </Allowed>
                        <Allowed op="backup.delete">
                          <Button
                            size="compact-sm"
                            variant="subtle"
                            color="red"
                            leftSection={<IconTrash size={14} />}
                            aria-label={`Delete ${b.name}`}
                            onClick={async () => {
                              if (!window.confirm(`Delete ${b.name}?`)) return
                              try {
                                await remove.mutateAsync({ name: b.name })
                              } catch (e) {
                                notifications.show({ color: 'red', title: 'Not deleted', message: (e as PanelCallError).message })
                              }
                            }}
                          >
                            Delete
                          </Button>
                        </Allowed>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Card>
      </Stack>
      {restoring && <RestoreModal name={restoring} onClose={() => setRestoring(null)} />}
    </>
  )
}
