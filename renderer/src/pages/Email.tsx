import { Stack } from '@mantine/core'
import { useOp } from '../api'
import { ErrorNotice, Loading, PageHeader } from '../components/common'

export default function Email() {
  const settings = useOp('email.get', {})
  return (
    <Stack>
      <PageHeader title="Email" description="Outgoing mail: SMTP, templates and the outbox." />
      <ErrorNotice error={settings.error} />
      {settings.isPending && <Loading />}
    </Stack>
  )
}
