import {
  Alert,
  Badge,
  Button,
  Checkbox,
  FileInput,
  Group,
  Modal,
  Progress,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
} from '@mantine/core'
import { IconFileImport } from '@tabler/icons-react'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import type { ImportJob } from '../../../../server/features/import/panel-contract'
import { UPLOAD_CHUNK_BYTES } from '../../../../server/features/import/panel-contract'
import { call, PanelCallError } from '../../api'

/** Base64 of a part of the file (the panel's operations carry JSON). */
async function base64Of(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer())
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

const HASH_NAMES: Record<string, string> = {
  scrypt: 'better-auth scrypt',
  bcrypt: 'bcrypt',
  argon2id: 'argon2id',
  argon2i: 'argon2i',
  pbkdf2: 'PBKDF2',
  'sha512-crypt': 'SHA-512 crypt',
}

type Stage = 'choose' | 'uploading' | 'checking' | 'preview' | 'importing' | 'done'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

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

/**
 * The Users view's Import step (issue 29): choose a users file (JSON or CSV) or a better-auth
 * database, check it (a dry run: counts, hash formats found, problems by line), import with a
 * progress bar, then the summary. The server runs the same functions as `gatehouse import`.
 */
export function ImportUsers({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const client = useQueryClient()
  const [kind, setKind] = useState<'users-file' | 'better-auth'>('users-file')
  const [file, setFile] = useState<File | null>(null)
  const [format, setFormat] = useState<'auto' | 'json' | 'csv'>('auto')
  const [skipInvalid, setSkipInvalid] = useState(false)
  const [from, setFrom] = useState('')
  const [stage, setStage] = useState<Stage>('choose')
  const [uploaded, setUploaded] = useState<{ id: string; fraction: number } | null>(null)
  const [job, setJob] = useState<ImportJob | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  const [fieldError, setFieldError] = useState<string | null>(null)

  const reset = () => {
    setStage('choose')
    setUploaded(null)
    setJob(null)
    setFailure(null)
    setFieldError(null)
  }
  const close = () => {
    if (stage === 'uploading' || stage === 'checking' || stage === 'importing') return
    reset()
    setFile(null)
    setFrom('')
    onClose()
  }

  /** Follows the job until it ends; returns it. */
  const follow = async (started: ImportJob): Promise<ImportJob> => {
    let current = started
    setJob(current)
    for (let i = 0; current.running && i < 100_000; i++) {
      await sleep(200)
      current = (await call('import.status', {})) ?? current
      setJob(current)
    }
    return current
  }

  const upload = async (chosen: File): Promise<string> => {
    let id: string | null = null
    setUploaded({ id: '', fraction: 0 })
    for (let offset = 0; offset < chosen.size || offset === 0; offset += UPLOAD_CHUNK_BYTES) {
      const data = await base64Of(chosen.slice(offset, offset + UPLOAD_CHUNK_BYTES))
      const answer: { uploadId: string; bytes: number } = await call('import.upload', { uploadId: id, name: chosen.name, offset, data })
      const uploadId: string = answer.uploadId
      id = uploadId
      setUploaded({ id: uploadId, fraction: chosen.size ? answer.bytes / chosen.size : 1 })
      if (chosen.size === 0) break
    }
    return id as string
  }

  const start = async (dryRun: boolean) => {
    setFailure(null)
    setFieldError(null)
    try {
      let started: ImportJob
      if (kind === 'users-file') {
        if (!file) return setFieldError('Choose a JSON or CSV file')
        let id = uploaded?.id
        if (!id) {
          setStage('uploading')
          id = await upload(file)
        }
        setStage(dryRun ? 'checking' : 'importing')
        started = await call('import.start', {
          source: 'users-file',
          uploadId: id,
          format: format === 'auto' ? null : format,
          skipInvalid,
          dryRun,
        })
      } else {
        if (!from.trim()) return setFieldError('Enter the path of a better-auth SQLite file or a postgres:// URL')
        setStage(dryRun ? 'checking' : 'importing')
        started = await call('import.start', { source: 'better-auth', from, dryRun })
      }
      const ended = await follow(started)
      if (ended.error) {
        setFailure(ended.error)
        setStage('choose')
        return
      }
      setStage(dryRun ? 'preview' : 'done')
      if (!dryRun) void client.invalidateQueries()
    } catch (e) {
      const message = e instanceof PanelCallError ? (e.issues[0]?.message ?? e.message) : 'The import could not start'
      setFailure(message)
      setUploaded(null)
      setStage('choose')
    }
  }

  const busy = stage === 'uploading' || stage === 'checking' || stage === 'importing'
  const importable = job?.report && !job.refused && job.report.users > 0
  const hashFormats = Object.entries(job?.hashFormats ?? {})

  return (
    <Modal opened={opened} onClose={close} title="Import users" size="lg" closeOnEscape={!busy} closeOnClickOutside={!busy}>
      <Stack gap="md" data-testid="import-dialog">
        {stage === 'choose' && (
          <>
            <SegmentedControl
              aria-label="Import from"
              value={kind}
              onChange={(v) => {
                setKind(v as typeof kind)
                reset()
              }}
              data={[
                { value: 'users-file', label: 'Users file (JSON or CSV)' },
                { value: 'better-auth', label: 'better-auth database' },
              ]}
            />
            {kind === 'users-file' ? (
              <>
                <FileInput
                  label="File"
                  description="A JSON array or a CSV with a header: email (required), name, emailVerified, username, role, createdAt, image, passwordHash"
                  placeholder="Choose a .json or .csv file"
                  accept=".json,.csv,application/json,text/csv"
                  clearable
                  value={file}
                  onChange={(f) => {
                    setFile(f)
                    setUploaded(null)
                    setFieldError(null)
                  }}
                  error={fieldError}
                  data-testid="import-file"
                />
                <Group align="flex-end">
                  <Select
                    label="Format"
                    w={200}
                    value={format}
                    onChange={(v) => setFormat((v as typeof format) ?? 'auto')}
                    allowDeselect={false}
                    data={[
                      { value: 'auto', label: 'From the file name' },
                      { value: 'json', label: 'JSON' },
                      { value: 'csv', label: 'CSV' },
                    ]}
                  />
                  <Checkbox
                    label="Skip invalid rows (import the others)"
                    checked={skipInvalid}
                    onChange={(e) => setSkipInvalid(e.currentTarget.checked)}
                    mb={8}
                  />
                </Group>
              </>
            ) : (
              <TextInput
                label="better-auth database"
                description="The path of the app's SQLite file on this server, or its PostgreSQL URL (postgres://…). Run Gatehouse with the app's secret to keep its sessions."
                placeholder="/srv/app/auth.db or postgres://user@host/app"
                value={from}
                onChange={(e) => {
                  setFrom(e.currentTarget.value)
                  setFieldError(null)
                }}
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
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button onClick={() => void start(true)} data-testid="import-check">
                Check
              </Button>
            </Group>
          </>
        )}

        {busy && (
          <Stack gap="xs">
            <Text size="sm" role="status">
              {stage === 'uploading'
                ? `Sending ${file?.name ?? 'the file'}…`
                : stage === 'checking'
                  ? `Checking ${job?.name ?? ''}… ${job?.rows ?? 0} rows`
                  : `Importing ${job?.name ?? ''}… ${job?.rows ?? 0} rows`}
            </Text>
            <Progress
              value={Math.round(100 * (stage === 'uploading' ? (uploaded?.fraction ?? 0) : (job?.fraction ?? 0)))}
              animated
              aria-label={stage === 'uploading' ? 'Upload progress' : stage === 'checking' ? 'Check progress' : 'Import progress'}
              data-testid="import-progress"
            />
          </Stack>
        )}

        {stage === 'preview' && job && (
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
              <Button variant="default" onClick={reset}>
                Back
              </Button>
              <Button
                leftSection={<IconFileImport size={16} />}
                disabled={!importable}
                onClick={() => void start(false)}
                data-testid="import-run"
              >
                {importable && job.report ? `Import ${job.report.users} ${job.report.users === 1 ? 'user' : 'users'}` : 'Import'}
              </Button>
            </Group>
          </>
        )}

        {stage === 'done' && job && (
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
              <Button onClick={close} data-testid="import-close">
                Done
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Modal>
  )
}
