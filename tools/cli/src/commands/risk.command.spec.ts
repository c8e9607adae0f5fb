import { classifyLine } from '@ormuz/risk';
import { catalogToolCheck } from './risk.command.js';

describe('ormuz risk classify: the catalog check', () => {
  const checkTool = catalogToolCheck();

  it('says an unknown tool is unknown and names the closest real tools, instead of rating it low', () => {
    const result = classifyLine(JSON.stringify({ tool: 'device.nuke', args: {} }), 1, undefined, checkTool);
    expect(result.ok).toBe(false);
    const { error } = JSON.parse(result.output) as { error: { code: string; message: string } };
    expect(error.code).toBe('unknown_tool');
    expect(error.message).toMatch(
      /^Line 1 names a tool that does not exist, so it has no risk: There is no tool named "device\.nuke"\./,
    );
    expect(error.message).toMatch(/The device extension's tools are: .*device\.send_message.*device\.tap/);
    expect(error.message).not.toMatch(/level/);
  });

  it('suggests the real name for a misspelt one', () => {
    expect(checkTool('device.send_mesage')).toMatch(/The closest real names: device\.send_message/);
  });

  it('lists the extensions when the name has none that exists', () => {
    expect(checkTool('weather.nuke')).toMatch(/the extensions are: .*device/);
  });

  it('knows every shipped tool', () => {
    for (const tool of ['device.tap', 'device.send_message', 'ormuz.search_tools'])
      expect(checkTool(tool)).toBeUndefined();
  });
});
