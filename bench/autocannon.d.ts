// The slice of autocannon 9's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  export interface Histogram {
    average: number
    mean: number
    p50: number
    p90: number
    p99: number
    max: number
    /** Only on `requests`: how many were answered in the run. */
    total: number
  }
  export interface RequestSpec {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    setupRequest?: (request: RequestSpec) => RequestSpec
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: RequestSpec[]
  }
  export interface Result {
    requests: Histogram
    latency: Histogram
    non2xx: number
    errors: number
    timeouts: number
    '2xx': number
    /** Seconds the run took (autocannon rounds it to hundredths). */
    duration: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
