import { Select } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useState } from 'react'
import { useOp } from '../api'

/**
 * Chooses a user by searching (name, email or username), instead of typing a raw id: for an
 * organization's new member, an API key's owner, an organization's owner. The value is the id.
 */
export function UserPicker({
  label,
  value,
  onChange,
  error,
  testId,
  description,
  size,
  required,
}: {
  label: string
  value: string | null
  onChange: (userId: string | null) => void
  error?: string | null
  testId?: string
  description?: string
  size?: 'xs' | 'sm'
  required?: boolean
}) {
  const [search, setSearch] = useState('')
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [chosen, setChosen] = useState<{ value: string; label: string } | null>(null)
  const found = useOp(
    'users.list',
    { ...(debounced ? { searchValue: debounced, searchField: 'any' as const } : {}), sortBy: 'email', sortDirection: 'asc', limit: 20 },
    { placeholderData: (prev) => prev },
  )
  // While the answer to what is typed now is on its way, the previous answer is narrowed to what
  // still matches, so a quick Enter never picks a user the search no longer names.
  const stale = search.trim() !== debounced || found.isPlaceholderData
  const needle = search.trim().toLowerCase()
  const options = (found.data?.users ?? [])
    .filter((u) => !stale || `${u.name} ${u.email} ${u.username ?? ''}`.toLowerCase().includes(needle))
    .map((u) => ({ value: u.id, label: `${u.name} <${u.email}>` }))
  // The chosen user stays an option while the search shows others.
  if (chosen && chosen.value === value && !options.some((o) => o.value === chosen.value)) options.unshift(chosen)
  return (
    <Select
      label={label}
      description={description}
      size={size}
      required={required}
      searchable
      clearable
      placeholder="Search by name, email or username"
      nothingFoundMessage={found.isFetching ? 'Searching…' : 'No user matches'}
      data={options}
      // The server searched already: show every answer.
      filter={({ options: all }) => all}
      value={value}
      searchValue={search}
      onSearchChange={setSearch}
      onChange={(next, option) => {
        setChosen(option ?? null)
        onChange(next)
      }}
      error={error}
      data-testid={testId}
    />
  )
}
