import '@mantine/core/styles.css'
import { MantineProvider } from '@mantine/core'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { api, type PublicConfig } from './api'
import { themeFor } from './theme'

/** The CSP nonce of this response (server/features/hosted-pages/assets.ts), for Mantine's <style> elements. */
const nonce = document.querySelector<HTMLMetaElement>('meta[name="gatehouse-style-nonce"]')?.content ?? ''

const FALLBACK: PublicConfig = {
  appName: 'Gatehouse',
  logo: null,
  color: '#1c64d8',
  emailAndPassword: true,
  signUp: false,
  username: false,
  passkey: false,
  twoFactor: false,
  socialProviders: [],
}

async function boot(): Promise<void> {
  let config = FALLBACK
  let configError: string | null = null
  try {
    config = await api<PublicConfig>('/ui/api/config')
  } catch (e) {
    configError = (e as Error).message
  }
  const { theme, resolver } = themeFor(config.color)
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <MantineProvider theme={theme} cssVariablesResolver={resolver} defaultColorScheme="auto" getStyleNonce={() => nonce}>
        <App config={config} configError={configError} />
      </MantineProvider>
    </StrictMode>,
  )
}

void boot()
