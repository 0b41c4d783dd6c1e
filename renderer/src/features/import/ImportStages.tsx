import { Alert, Badge, Button, Checkbox, FileInput, Group, SegmentedControl, Select, Stack, Table, Text, TextInput } from '@mantine/core'
import { IconFileImport } from '@tabler/icons-react'
import type { ImportJob } from '../../../../server/features/import/panel-contract'

const HASH_NAMES: Record<string, string> = {
  scrypt: 'better-auth scrypt',
  bcrypt: 'bcrypt',
  argon2id: 'argon2id',
  argon2i: 'argon2i',
  pbkdf2: 'PBKDF2',
  'sha512-crypt': 'SHA-512 crypt',
}

/** What the admin chose to import from, with the setters of the choices that need no reset. */
export interface SourceChoice {
  kind: 'users-file' | 'better-auth'
  file: File | null
  format: 'auto' | 'json' | 'csv'
  skipInvalid: boolean
  from: string
  setFormat: (format: SourceChoice['format']) => void
  setSkipInvalid: (skip: boolean) => void
}

/** The report's counts in words. */
function Counts({ job, label }: { job: ImportJob; label: string }) {
  const r = job.report
  if (!r) return null
  return (
    <Table fz="sm" aria-label={label} data-testid="import-counts">
      <Table.Tbody>
        <Table.Tr>
          <Table.Th scope="row">Users</Table.Th>
          <Table.Td>{r.users}</Table.Td>
        </Table.Tr>
        <Table.Tr>
          <Table.Th scope="row">Passwords (accounts)</Table.Th>
          <Table.Td>{r.accounts}</Table.Td>
        </Table.Tr>
        {job.source === 'better-auth' && (
          <>
            <Table.Tr>
              <Table.Th scope="row">Sessions</Table.Th>
              <Table.Td>{r.sessions}</Table.Td>
            </Table.Tr>
            <Table.Tr>
              <Table.Th scope="row">Organizations</Table.Th>
              <Table.Td>{r.organizations}</Table.Td>
            </Table.Tr>
          </>
        )}
        <Table.Tr>
          <Table.Th scope="row">Already here (skipped)</Table.Th>
          <Table.Td>{r.skipped.length}</Table.Td>
        </Table.Tr>
      </Table.Tbody>
    </Table>
  )
}

/** Every problem of the file, by line (or source row id), field and the reason, in the file's own words. */
function Problems({ job }: { job: ImportJob }) {
  const errors = job.report?.errors ?? []
  if (errors.length === 0) return null
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        {errors.length === 1 ? '1 problem' : `${errors.length} problems`}
      </Text>
      <Table.ScrollContainer minWidth={400} mah={240} type="native" tabIndex={0} aria-label="Problems in the file">
        <Table fz="sm" data-testid="import-problems">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{job.source === 'better-auth' ? 'Row' : 'Line'}</Table.Th>
              <Table.Th>Field</Table.Th>
              <Table.Th>Problem</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {errors.map((e) => (
              <Table.Tr key={`${e.line}-${e.field}-${e.reason}`}>
                <Table.Td>{e.line}</Table.Td>
                <Table.Td>{e.field ?? ''}</Table.Td>
                <Table.Td>{e.reason}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  )
}

/** The first step: a users file or a better-auth database, then Check (a dry run). */
export function ChooseSource({
  source,
  fieldError,
  failure,
  onKind,
  onFile,
  onFrom,
  onCancel,
  onCheck,
}: {
  source: SourceChoice
  fieldError: string | null
  failure: string | null
  onKind: (kind: SourceChoice['kind']) => void
  onFile: (file: File | null) => void
  onFrom: (from: string) => void
  onCancel: () => void
  onCheck: () => void
}) {
  return (
    <>
      <SegmentedControl
        aria-label="Import from"
        value={source.kind}
        onChange={(v) => onKind(v as SourceChoice['kind'])}
        data={[
          { value: 'users-file', label: 'Users file (JSON or CSV)' },
          { value: 'better-auth', label: 'better-auth database' },
        ]}
      />
      {source.kind === 'users-file' ? (
        <>
          <FileInput
            label="File"
            description="A JSON array or a CSV with a header: email (required), name, emailVerified, username, role, createdAt, image, passwordHash"
            placeholder="Choose a .json or .csv file"
            accept=".json,.csv,application/json,text/csv"
            clearable
            value={source.file}
            onChange={onFile}
            error={fieldError}
            data-testid="import-file"
          />
          <Group align="flex-end">
            <Select
              label="Format"
              w={200}
              value={source.format}
              onChange={(v) => source.setFormat((v as SourceChoice['format']) ?? 'auto')}
              allowDeselect={false}
              data={[
                { value: 'auto', label: 'From the file name' },
                { value: 'json', label: 'JSON' },
                { value: 'csv', label: 'CSV' },
              ]}
            />
            <Checkbox
              label="Skip invalid rows (import the others)"
              checked={source.skipInvalid}
              onChange={(e) => source.setSkipInvalid(e.currentTarget.checked)}
              mb={8}
            />
          </Group>
        </>
      ) : (
        <TextInput
          label="better-auth database"
          description="The path of the app's SQLite file on this server, or its PostgreSQL URL (postgres://…). Run Gatehouse with the app's secret to keep its sessions."
          placeholder="/srv/app/auth.db or postgres://user@host/app"
          value={source.from}
          onChange={(e) => onFrom(e.currentTarget.value)}
          error={fieldError}
          data-testid="import-from"
        />
      )}
      {failure && (
        <Alert color="red" title="Could not import" role="alert" data-testid="import-failure">
          {failure}
        </Alert>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onCancel}>
          Cancel
        </Button>
        <Button onClick={onCheck} data-testid="import-check">
          Check
        </Button>
      </Group>
    </>
  )
}

/** The dry run's answer: what an import would bring in, the hash formats found, the problems. */
export function ImportPreview({ job, onBack, onImport }: { job: ImportJob; onBack: () => void; onImport: () => void }) {
  const importable = job.report && !job.refused && job.report.users > 0
  const hashFormats = Object.entries(job.hashFormats ?? {})
  return (
    <>
      <Text size="sm" data-testid="import-preview">
        {job.refused
          ? `Nothing can be imported from ${job.name} until these problems are fixed.`
          : `Checked ${job.name}: nothing is changed yet. An import would bring in:`}
      </Text>
      {!job.refused && <Counts job={job} label="What the import would bring in" />}
      {hashFormats.length > 0 && (
        <Group gap="xs" data-testid="import-hash-formats">
          <Text size="sm">Password hashes:</Text>
          {hashFormats.map(([name, n]) => (
            <Badge key={name} variant="light" color="dark">
              {HASH_NAMES[name] ?? name}: {n}
            </Badge>
          ))}
        </Group>
      )}
      {!job.refused && job.report && job.report.errors.length > 0 && (
        <Text size="sm">These rows are left out (skip invalid rows is on):</Text>
      )}
      <Problems job={job} />
      {job.report && !job.refused && job.report.users === 0 && (
        <Text size="sm" data-testid="import-nothing">
          Nothing new to import: every user of this source is already here.
        </Text>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onBack}>
          Back
        </Button>
        <Button leftSection={<IconFileImport size={16} />} disabled={!importable} onClick={onImport} data-testid="import-run">
          {importable && job.report ? `Import ${job.report.users} ${job.report.users === 1 ? 'user' : 'users'}` : 'Import'}
        </Button>
      </Group>
    </>
  )
}

/** The import's end: what was imported, or why nothing was. */
export function ImportSummary({ job, onClose }: { job: ImportJob; onClose: () => void }) {
  return (
    <>
      {job.refused ? (
        <Alert color="red" title="Nothing was imported" role="alert" data-testid="import-refused">
          The source changed since the check. Fix these problems and try again.
        </Alert>
      ) : (
        <Alert
          color="teal"
          title={
            <Text fw={700} size="sm" c="dark.9">
              Import finished
            </Text>
          }
          role="status"
          data-testid="import-done"
        >
          {`Imported ${job.report?.users ?? 0} users from ${job.name}.`}
        </Alert>
      )}
      <Counts job={job} label="What was imported" />
      <Problems job={job} />
      <Group justify="flex-end">
        <Button onClick={onClose} data-testid="import-close">
          Done
        </Button>
      </Group>
    </>
  )
}
