import { Anchor, Badge, NavLink, SimpleGrid, Stack, Text } from '@mantine/core'
import { useContext, useEffect, useMemo, useState } from 'react'
import { useOp } from '../../api'
import { ErrorNotice, Loading, PageHeader } from '../../components/common'
import { ink } from '../../ink'
import { useUnsaved } from '../../unsaved'
import { PanelFeatures } from '../panel-feature'
import { LockedAccounts, ReadAtStartUp } from './SectionExtras'
import { SectionForm } from './SectionForm'
import { type SectionSpec, sectionPatch, sectionsOf, uncoveredFields } from './settings-fields'

type Values = Record<string, unknown>

/** The section named in the hash (#/settings?section=sessions). */
function sectionFromHash(): string {
  const query = window.location.hash.split('?')[1] ?? ''
  return new URLSearchParams(query).get('section') ?? ''
}

export default function Settings() {
  const settings = useOp('settings.get', {}, { refetchOnWindowFocus: false })
  const [current, setCurrent] = useState(sectionFromHash)
  const [drafts, setDrafts] = useState<Record<string, Values>>({})
  const [rawJson, setRawJson] = useState<Record<string, string>>({})
  useEffect(() => {
    const update = () => setCurrent(sectionFromHash())
    window.addEventListener('hashchange', update)
    return () => window.removeEventListener('hashchange', update)
  }, [])
  const effective = settings.data?.effective
  const features = useContext(PanelFeatures)
  const declared = useMemo(() => sectionsOf(features), [features])
  const more = useMemo(() => (effective ? uncoveredFields(effective, features) : []), [effective, features])
  const sections: SectionSpec[] = more.length
    ? [...declared, { id: 'more', title: 'More', description: 'Keys of features this view has no form for yet.', fields: more }]
    : declared
  const section = sections.find((s) => s.id === current) ?? sections[0]!
  const allFields = useMemo(() => sections.flatMap((s) => s.fields), [sections])
  const unsaved = (s: SectionSpec) =>
    s.fields.some((f) => rawJson[f.path] !== undefined) ||
    Boolean(effective && drafts[s.id] && sectionPatch(s.fields, effective, drafts[s.id] as Values))
  useUnsaved('settings', sections.some(unsaved))

  return (
    <Stack>
      <PageHeader
        title="Settings"
        description="Every setting of the server, by subject. Each section is checked with the server's own rules and saved on its own; no restart needed."
      />
      <ErrorNotice error={settings.error} onRetry={() => void settings.refetch()} />
      {!settings.data ? (
        !settings.error && <Loading />
      ) : (
        <SimpleGrid cols={{ base: 1, md: 4 }} spacing="lg">
          <nav aria-label="Settings sections">
            <Stack gap={2}>
              {sections.map((s) => (
                <NavLink
                  key={s.id}
                  href={`#/settings?section=${s.id}`}
                  label={s.title}
                  rightSection={
                    unsaved(s) ? (
                      <Badge size="xs" color={ink.accent} variant="outline">
                        unsaved
                      </Badge>
                    ) : undefined
                  }
                  active={s.id === section.id}
                  aria-current={s.id === section.id ? 'page' : undefined}
                  data-testid={`settings-nav-${s.id}`}
                />
              ))}
            </Stack>
            <Text size="xs" c="dimmed" mt="md" px="sm">
              Social sign-in is set in <Anchor href="#/providers">Providers</Anchor>; the SMTP server in{' '}
              <Anchor href="#/email">Email</Anchor>.
            </Text>
          </nav>
          <div style={{ gridColumn: 'span 3' }}>
            <SectionForm
              key={`${section.id}:${JSON.stringify(settings.data.effective)}`}
              section={section}
              allFields={allFields}
              rawJson={rawJson}
              onRawJson={(path, text) =>
                setRawJson((prev) => {
                  const next = { ...prev }
                  if (text === undefined) delete next[path]
                  else next[path] = text
                  return next
                })
              }
              effective={settings.data.effective}
              startup={settings.data.startup}
              draft={drafts[section.id]}
              onDraft={(values) =>
                setDrafts((prev) => {
                  const next = { ...prev }
                  if (values) next[section.id] = values
                  else delete next[section.id]
                  return next
                })
              }
              extra={
                section.id === 'application' ? (
                  <ReadAtStartUp basePath={String(settings.data.effective.basePath ?? '')} />
                ) : section.id === 'rate-limits' ? (
                  <LockedAccounts />
                ) : section.id === 'mail' ? (
                  <Text size="sm">
                    The SMTP server, a test email, the templates and the outbox are in <Anchor href="#/email">Email</Anchor>.
                  </Text>
                ) : undefined
              }
            />
          </div>
        </SimpleGrid>
      )}
    </Stack>
  )
}
