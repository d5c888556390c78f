/**
 * Program files (`.trtp`): a compiled program saved as a zip archive of `manifest.json` and
 * binary blobs (engines, fallback graphs, constants), each blob with its SHA-256 in the
 * manifest. docs/program-format.md describes the format and its versioning policy.
 *
 * By concern: manifest.ts (the manifest's types and constants), write.ts (manifest and blobs
 * from a program, zipped), read.ts (container, version, structure and checksums, before
 * anything is deserialized), load.ts (device selection, then the Program), values.ts (the
 * generic value encoding), reader.ts (the validating JSON reader). Every problem with a file
 * is a BadProgramError (`E_BAD_PROGRAM`) naming the file and the cause.
 */
export { MANIFEST_ENTRY, PROGRAM_FORMAT, PROGRAM_FORMAT_VERSION } from './manifest';
export type {
  EncodedValue,
  ManifestEngineSegment,
  ManifestFallbackSegment,
  ManifestIO,
  ManifestSegment,
  ProgramFileContents,
  ProgramManifest,
} from './manifest';
export { packProgramFile, programManifest, saveProgram, saveProgramBuffer } from './write';
export type { SavableProgram } from './write';
export { checkFormatVersion, readProgramFile } from './read';
export { loadProgram, loadProgramBuffer, selectProgramDevices } from './load';
export type { LoadProgramOptions } from './load';
export { selectDevice } from '../../engine/device-selection';
export type { DeviceSelection, DeviceTarget, EngineDevice, HardwareCompatibilityLevel } from '../../engine/device-selection';
