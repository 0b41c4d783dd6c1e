import { Modal, Progress, Stack, Text } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import type { ImportJob } from '../../../../server/features/import/panel-contract'
import { UPLOAD_CHUNK_BYTES } from '../../../../server/features/import/panel-contract'
import { call, PanelCallError } from '../../api'
import { ChooseSource, ImportPreview, ImportSummary, type SourceChoice } from './ImportStages'

/** Base64 of a part of the file (the panel's operations carry JSON). */
async function base64Of(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer())
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}

type Stage = 'choose' | 'uploading' | 'checking' | 'preview' | 'importing' | 'done'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

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
  const source: SourceChoice = { kind, file, format, skipInvalid, from, setFormat, setSkipInvalid }

  return (
    <Modal opened={opened} onClose={close} title="Import users" size="lg" closeOnEscape={!busy} closeOnClickOutside={!busy}>
      <Stack gap="md" data-testid="import-dialog">
        {stage === 'choose' && (
          <ChooseSource
            source={source}
            fieldError={fieldError}
            failure={failure}
            onKind={(v) => {
              setKind(v)
              reset()
            }}
            onFile={(f) => {
              setFile(f)
              setUploaded(null)
              setFieldError(null)
            }}
            onFrom={(v) => {
              setFrom(v)
              setFieldError(null)
            }}
            onCancel={close}
            onCheck={() => void start(true)}
          />
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

        {stage === 'preview' && job && <ImportPreview job={job} onBack={reset} onImport={() => void start(false)} />}

        {stage === 'done' && job && <ImportSummary job={job} onClose={close} />}
      </Stack>
    </Modal>
  )
}
