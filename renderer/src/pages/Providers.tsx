import { Stack } from '@mantine/core'
import { useOp } from '../api'
import { ErrorNotice, Loading, PageHeader } from '../components/common'

export default function Providers() {
  const list = useOp('providers.list', {})
  return (
    <Stack>
      <PageHeader title="Providers" description="Social sign-in providers." />
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
    </Stack>
  )
}
