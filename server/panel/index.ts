import type { Gatehouse, Logger } from '../gatehouse.js'
import { consoleLogger } from '../gatehouse.js'
import { packageVersion } from '../version.js'
import { ensurePanelAssets } from './build.js'
import { defaultAssetsDir, type PanelServer, startPanelServer } from './http.js'
import { createPanelService, type PanelService } from './service.js'

export interface BrowserPanelOptions {
  port: number
  token?: string
  assetsDir?: string
  logger?: Logger
  /** Build the renderer on first use when its files are missing (default true). */
  buildOnDemand?: boolean
}

export interface BrowserPanel extends PanelServer {
  service: PanelService
}

/** The API URL a Gatehouse answers on now (its base URL follows the real port after listen()). */
export const apiURLOf = (gatehouse: Gatehouse) => (): string => gatehouse.ctx.baseURL

/**
 * Starts the browser control panel for a running Gatehouse: loopback only, token-gated. If its
 * port is taken the API keeps running and the reason is logged (the panel is an extra).
 */
export async function startBrowserPanel(gatehouse: Gatehouse, portOrOptions: number | BrowserPanelOptions): Promise<BrowserPanel> {
  const options = typeof portOrOptions === 'number' ? { port: portOrOptions } : portOrOptions
  const logger = options.logger ?? consoleLogger
  const service = createPanelService({
    gatehouse,
    apiURL: apiURLOf(gatehouse),
    mode: 'browser',
    version: packageVersion(),
    startedAt: Date.now(),
    logger,
  })
  const assetsDir = options.assetsDir ?? defaultAssetsDir()
  const server = await startPanelServer({
    service,
    port: options.port,
    token: options.token,
    assetsDir,
    prepareAssets: options.buildOnDemand === false ? undefined : () => ensurePanelAssets(assetsDir, (line) => logger.info(line)),
  })
  return { ...server, service }
}
