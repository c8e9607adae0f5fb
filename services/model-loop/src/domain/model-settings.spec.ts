import { checkedModelSettings, mergeModelSettings } from './model-settings.js';

describe('checkedModelSettings', () => {
  it('trims values and the trailing slash of the base URL', () => {
    expect(checkedModelSettings({ base_url: ' http://127.0.0.1:8080/v1/ ', api_key_env: ' KEY ' })).toEqual({
      base_url: 'http://127.0.0.1:8080/v1',
      api_key_env: 'KEY',
    });
    expect(checkedModelSettings(undefined)).toEqual({});
  });

  it('lists every problem in one refusal', () => {
    expect(() =>
      checkedModelSettings({ base_url: 'file:///etc/passwd', api_key_env: 'A-B', api_key_file: 'key.txt' }),
    ).toThrow(
      /base_url "file:\/\/\/etc\/passwd" is not an http or https URL; api_key_env "A-B" is not an environment variable name.*; api_key_file "key.txt" is not an absolute path; name the key by api_key_env or by api_key_file, not both/,
    );
  });

  it('refuses credentials in the base URL', () => {
    expect(() => checkedModelSettings({ base_url: 'https://me:secret@example.com/v1' })).toThrow(/credentials/);
  });
});

describe('mergeModelSettings', () => {
  it("puts the start's values over the agent's, a key source replacing both of the agent's", () => {
    const agent = { base_url: 'http://a/v1', api_key_env: 'AGENT_KEY', max_output_tokens: 100 };
    expect(mergeModelSettings(agent, { api_key_file: '/run/secrets/key' })).toEqual({
      base_url: 'http://a/v1',
      api_key_file: '/run/secrets/key',
      max_output_tokens: 100,
    });
    expect(mergeModelSettings(agent, { max_output_tokens: 5 })).toEqual({ ...agent, max_output_tokens: 5 });
  });
});
