import { Alert, Box, Container, Group, Image, Paper, Stack, Text, Title } from '@mantine/core'
import { type ReactNode, useEffect } from 'react'
import type { PublicConfig } from './api'

/** One hosted page: the application's logo and name, the page's heading, its content. */
export function Layout({ config, title, children }: { config: PublicConfig; title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · ${config.appName}`
  }, [title, config.appName])
  return (
    <Box component="main" py={48} px="md" mih="100vh" bg="var(--gh-page-bg)">
      <Container size={420} p={0}>
        <Stack gap="lg">
          <Group gap="sm" justify="center" data-testid="brand">
            {/* The name is written beside it, so the logo itself is decorative. */}
            {config.logo ? <Image src={config.logo} alt="" h={40} w="auto" fit="contain" /> : null}
            <Text fw={700} size="lg" c="bright" data-testid="app-name">
              {config.appName}
            </Text>
          </Group>
          <Paper withBorder shadow="sm" p="xl" radius="md" bg="var(--mantine-color-body)">
            <Stack gap="md">
              <Title order={1} size="h2">
                {title}
              </Title>
              {children}
            </Stack>
          </Paper>
        </Stack>
      </Container>
    </Box>
  )
}

/** A refusal that concerns no single field, announced to screen readers. */
export function FormAlert({ message }: { message: string | null }) {
  if (!message) return null
  return (
    <Alert color="red" variant="light" role="alert" title="Could not continue">
      <Text size="sm" c="bright">
        {message}
      </Text>
    </Alert>
  )
}
