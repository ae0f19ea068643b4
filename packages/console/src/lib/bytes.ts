// Sizes as people read them: 1 KiB = 1024 bytes, one decimal above bytes.

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number): string {
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} ${n === 1 ? 'byte' : 'bytes'}` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
