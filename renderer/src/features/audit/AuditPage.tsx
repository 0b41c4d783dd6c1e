import { Button, Card, Group, Pagination, Progress, SegmentedControl, Select, SimpleGrid, Stack, Text, TextInput } from '@mantine/core'
import { DateTimePicker } from '@mantine/dates'
import { useDebouncedValue } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { IconDownload, IconFilterOff } from '@tabler/icons-react'
import { useState } from 'react'
import type { OpOutput } from '../../../../server/panel/contract'
import type { AuditFilter } from '../../../../server/features/audit/panel-contract'
import { call, download, type PanelCallError, useOp } from '../../api'
import { AuditTable } from '../../components/AuditTable'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { DATE_PICKER_FORMAT, epochOf } from '../../format'

const PAGE = 50

/** CSV and JSON exports of every event the filter matches, with a progress bar. */
function ExportButtons({ filter }: { filter: AuditFilter }) {
  const [exporting, setExporting] = useState<string | null>(null)
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null)

  /**
   * Exports every matching event, page after page (no cap): the server answers 1000 rows at a
   * time after a cursor, the bar shows how many of the total are in, and the file is saved once
   * all pages are.
   */
  const exportAs = async (format: 'csv' | 'json') => {
    setExporting(format)
    setProgress({ done: 0, total: 0 })
    try {
      const parts: string[] = []
      let after: { createdAt: number; id: number } | null = null
      let done = 0
      let file: { filename: string; mime: string } | null = null
      for (;;) {
        const page: OpOutput<'audit.exportPage'> = await call('audit.exportPage', { ...filter, format, after, size: 1000 })
        file ??= { filename: page.filename, mime: page.mime }
        if (page.content) parts.push(page.content)
        done += page.count
        setProgress({ done, total: Math.max(page.total, done) })
        if (!page.next) break
        after = page.next
      }
      const content = format === 'csv' ? parts.join('') : `[\n${parts.join(',\n')}${parts.length ? '\n' : ''}]\n`
      if (file) download(file.filename, file.mime, content)
      notifications.show({ color: 'teal', title: 'Exported', message: `${done} events in ${file?.filename ?? ''}` })
    } catch (e) {
      notifications.show({ color: 'red', title: 'Export failed', message: (e as PanelCallError).message })
    } finally {
      setExporting(null)
      setProgress(null)
    }
  }

  return (
    <>
      <Button
        variant="default"
        leftSection={<IconDownload size={16} />}
        loading={exporting === 'csv'}
        onClick={() => exportAs('csv')}
        data-testid="export-csv"
      >
        CSV
      </Button>
      <Button
        variant="default"
        leftSection={<IconDownload size={16} />}
        loading={exporting === 'json'}
        onClick={() => exportAs('json')}
        data-testid="export-json"
      >
        JSON
      </Button>
      {progress && (
        <Stack gap={2} w={160} data-testid="export-progress" aria-live="polite">
          <Progress value={progress.total ? (100 * progress.done) / progress.total : 0} size="sm" animated />
          <Text size="xs" c="dimmed">
            {progress.done} of {progress.total} events
          </Text>
        </Stack>
      )}
    </>
  )
}

export default function Audit() {
  const [type, setType] = useState<string | null>(null)
  const [user, setUser] = useState('')
  const [ip, setIp] = useState('')
  const [outcome, setOutcome] = useState('all')
  const [from, setFrom] = useState<string | null>(null)
  const [to, setTo] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  const [debouncedUser] = useDebouncedValue(user.trim(), 300)
  const [debouncedIp] = useDebouncedValue(ip.trim(), 300)

  const filter: AuditFilter = {
    ...(type ? { type } : {}),
    ...(debouncedUser ? { user: debouncedUser } : {}),
    ...(debouncedIp ? { ip: debouncedIp } : {}),
    ...(outcome !== 'all' ? { outcome: outcome as 'success' | 'failure' } : {}),
    ...(from ? { from: epochOf(from) } : {}),
    ...(to ? { to: epochOf(to) } : {}),
  }
  const types = useOp('audit.types', {})
  const list = useOp('audit.list', { ...filter, limit: PAGE, offset: (page - 1) * PAGE }, { placeholderData: (prev) => prev })
  const pages = Math.max(1, Math.ceil((list.data?.total ?? 0) / PAGE))
  const filtered = Object.keys(filter).length > 0

  const reset = () => {
    setType(null)
    setUser('')
    setIp('')
    setOutcome('all')
    setFrom(null)
    setTo(null)
    setPage(1)
  }

  return (
    <Stack>
      <PageHeader
        title="Audit log"
        description="Every sign-in, sign-up, session change and admin action, newest first. The log is append-only."
        actions={<ExportButtons filter={filter} />}
      />
      <Card withBorder padding="md">
        <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
          <Select
            label="Event type"
            placeholder="All events"
            data={types.data ?? []}
            value={type}
            onChange={(v) => {
              setType(v)
              setPage(1)
            }}
            searchable
            clearable
            data-testid="filter-type"
          />
          <TextInput
            label="User"
            placeholder="User id or email"
            value={user}
            onChange={(e) => {
              setUser(e.currentTarget.value)
              setPage(1)
            }}
            data-testid="filter-user"
          />
          <TextInput
            label="IP address"
            placeholder="Starts with, e.g. 192.168."
            value={ip}
            onChange={(e) => {
              setIp(e.currentTarget.value)
              setPage(1)
            }}
            data-testid="filter-ip"
          />
          <DateTimePicker valueFormat={DATE_PICKER_FORMAT} label="From" placeholder="Any time" value={from} onChange={setFrom} clearable />
          <DateTimePicker valueFormat={DATE_PICKER_FORMAT} label="To" placeholder="Now" value={to} onChange={setTo} clearable />
          <Stack gap={4}>
            <Text size="sm" fw={500}>
              Outcome
            </Text>
            <SegmentedControl
              value={outcome}
              onChange={(v) => {
                setOutcome(v)
                setPage(1)
              }}
              data={[
                { label: 'All', value: 'all' },
                { label: 'Success', value: 'success' },
                { label: 'Failure', value: 'failure' },
              ]}
              data-testid="filter-outcome"
            />
          </Stack>
        </SimpleGrid>
        {filtered && (
          <Group mt="sm">
            <Button size="xs" variant="subtle" leftSection={<IconFilterOff size={14} />} onClick={reset}>
              Clear filters
            </Button>
          </Group>
        )}
      </Card>
      <ErrorNotice error={list.error} onRetry={() => void list.refetch()} />
      <Card withBorder padding="md">
        <Group justify="space-between" mb="sm">
          <Text size="sm" c="dimmed" data-testid="audit-total">
            {list.data ? `${list.data.total} event${list.data.total === 1 ? '' : 's'}` : ' '}
          </Text>
          <Pagination
            total={pages}
            value={page}
            onChange={setPage}
            size="sm"
            aria-label="Audit log pages"
            getControlProps={(control) => ({
              'aria-label':
                control === 'previous'
                  ? 'Previous page'
                  : control === 'next'
                    ? 'Next page'
                    : control === 'first'
                      ? 'First page'
                      : 'Last page',
            })}
            getItemProps={(n) => ({ 'aria-label': `Page ${n}` })}
          />
        </Group>
        {!list.data ? (
          <Loading />
        ) : list.data.events.length === 0 ? (
          <Text c="dimmed" size="sm" ta="center" p="lg">
            {filtered ? 'No event matches these filters.' : 'The log is empty: events appear as users sign up and sign in.'}
          </Text>
        ) : (
          <AuditTable events={list.data.events} people={list.data.people} />
        )}
      </Card>
    </Stack>
  )
}
