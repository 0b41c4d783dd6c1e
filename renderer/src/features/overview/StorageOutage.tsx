import { Alert, Text } from '@mantine/core'
import { IconDatabaseOff } from '@tabler/icons-react'
import type { StorageOutageView } from '../../../../server/features/overview/panel-contract'
import { dateTime } from '../../format'

const TITLES: Record<StorageOutageView['code'], string> = {
  DATABASE_UNAVAILABLE: 'The database cannot be reached',
  STORAGE_FULL: 'The disk of the database is full',
  DATABASE_NOT_WRITABLE: 'The database refuses writes',
}

const WHAT_TO_DO: Record<StorageOutageView['code'], string> = {
  DATABASE_UNAVAILABLE: 'Check that PostgreSQL is running and reachable; Gatehouse reconnects by itself.',
  STORAGE_FULL: 'Free space on the disk of the data directory; Gatehouse resumes by itself.',
  DATABASE_NOT_WRITABLE:
    'Make the data directory and its database writable again (a read-only mount or file, a disk error, a PostgreSQL standby); Gatehouse resumes by itself.',
}

/**
 * A storage outage in progress (issue 31 §6): apps get 503 with this code until it is over, and
 * the figures on this page cannot be read meanwhile.
 */
export function StorageOutage({ outage }: { outage: StorageOutageView }) {
  return (
    <Alert color="red" variant="light" icon={<IconDatabaseOff />} title={TITLES[outage.code]} data-testid="storage-outage" role="alert">
      <Text size="sm">
        Since {dateTime(outage.since)}, requests that need the database answer 503 <code>{outage.code}</code>. The database said:{' '}
        <code>{outage.cause}</code>
      </Text>
      <Text size="sm">{WHAT_TO_DO[outage.code]}</Text>
    </Alert>
  )
}
