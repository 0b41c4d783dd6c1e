import { startDesktop } from './app.js'

void startDesktop()
