import { Group, Pagination } from '@mantine/core'

/** A list's page numbers under its table, shown when there is more than one page. */
export function ListPagination({
  total,
  pageSize,
  page,
  onChange,
  label,
}: {
  total: number
  pageSize: number
  page: number
  onChange: (page: number) => void
  label: string
}) {
  if (total <= pageSize) return null
  return (
    <Group justify="flex-end" mt="sm">
      <Pagination
        total={Math.ceil(total / pageSize)}
        value={page}
        onChange={onChange}
        size="sm"
        aria-label={label}
        getControlProps={(control) => ({ 'aria-label': `${control[0]?.toUpperCase()}${control.slice(1)} page` })}
        getItemProps={(n) => ({ 'aria-label': `Page ${n}` })}
      />
    </Group>
  )
}
