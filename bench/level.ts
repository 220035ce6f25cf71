// The API level a bench process runs at: its argument, else BENCH_API_LEVEL, else the default.
import { API_LEVELS, DEFAULT_API_LEVEL, isApiLevel, type ApiLevel } from '../src/inputs/api-level.ts';

export function benchApiLevel(arg?: string): ApiLevel {
  const value = arg || process.env.BENCH_API_LEVEL || DEFAULT_API_LEVEL;
  if (!isApiLevel(value)) throw new Error(`API level must be one of ${API_LEVELS.join(', ')}, not "${value}"`);
  return value;
}
