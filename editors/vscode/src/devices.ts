// The `xeforge/devices` reply → quick-pick entries. The reply is read leniently (a list of
// ids, a list of objects, or `{devices, current}`) so that a server adding fields does not
// break the picker; anything unusable is dropped, never shown as "undefined".

export interface DeviceEntry {
  id: string;
  name?: string;
  detail?: string;
  current: boolean;
}

export interface DeviceList {
  devices: DeviceEntry[];
  current?: string;
  /** The toolchain in effect, when the server says. */
  toolchain?: string;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function detailOf(o: Record<string, unknown>): string | undefined {
  const parts = [str(o.vendor), str(o.architecture) ?? str(o.arch), str(o.detail) ?? str(o.description)];
  const present = parts.filter((p): p is string => p !== undefined);
  return present.length ? present.join(' · ') : undefined;
}

export function parseDevices(reply: unknown): DeviceList {
  let items: unknown[] = [];
  let current: string | undefined;
  let toolchain: string | undefined;
  if (Array.isArray(reply)) {
    items = reply;
  } else if (reply && typeof reply === 'object') {
    const o = reply as Record<string, unknown>;
    if (Array.isArray(o.devices)) items = o.devices;
    // xeforge's reply: {devices: [{id, name, vendor, arch, selected}], device, toolchain, toolchains}
    current = str(o.current) ?? str(o.selected) ?? str(o.device);
    toolchain = str(o.toolchain);
  }
  const devices: DeviceEntry[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    let entry: DeviceEntry | undefined;
    if (typeof item === 'string' && item.trim()) {
      entry = { id: item, current: false };
    } else if (item && typeof item === 'object') {
      const o = item as Record<string, unknown>;
      const id = str(o.id) ?? str(o.name);
      if (id) {
        const name = str(o.display_name) ?? str(o.displayName) ?? (str(o.id) ? str(o.name) : undefined);
        entry = { id, name, detail: detailOf(o), current: o.current === true || o.selected === true };
      }
    }
    if (entry && !seen.has(entry.id)) {
      seen.add(entry.id);
      devices.push(entry);
    }
  }
  current ??= devices.find((d) => d.current)?.id;
  for (const d of devices) d.current = d.id === current;
  return { devices, current, toolchain };
}

export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
  id: string;
}

export function devicePickItems(list: DeviceList): PickItem[] {
  // The current device first, so Enter keeps it.
  const ordered = [...list.devices].sort((a, b) => Number(b.current) - Number(a.current));
  return ordered.map((d) => ({
    label: d.current ? `$(check) ${d.id}` : d.id,
    description: [d.name, d.current ? 'current' : undefined].filter(Boolean).join(' — ') || undefined,
    detail: d.detail,
    id: d.id,
  }));
}
