import { dockerAnswers } from './global-setup.js';

describe('dockerAnswers', () => {
  it('is false, quickly, when nothing listens on the Docker socket', async () => {
    const started = Date.now();
    await expect(dockerAnswers({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' })).resolves.toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('is false when a TCP Docker host refuses the connection', async () => {
    await expect(dockerAnswers({ DOCKER_HOST: 'tcp://127.0.0.1:1' })).resolves.toBe(false);
  });
});
