import { Stack } from '@mantine/core'
import { useOp } from '../api'
import { ErrorNotice, Loading, PageHeader } from '../components/common'

export default function Organizations() {
  const list = useOp('orgs.list', {})
  return (
    <Stack>
      <PageHeader title="Organizations" description="Organizations, their members, teams and invitations." />
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
    </Stack>
  )
}
