import numpy as np, mujoco
xml = """<mujoco><option gravity="0 0 0" timestep="0.001"/><worldbody><body><joint type="ball" damping="0"/><geom type="sphere" size=".05"/></body></worldbody>
<sensor><ballquat joint="j" name="q"/><ballangvel joint="j" name="w"/></sensor></mujoco>"""
xml = xml.replace('<joint type="ball"', '<joint name="j" type="ball"')
m = mujoco.MjModel.from_xml_string(xml); d = mujoco.MjData(m)
d.qpos[:] = [np.cos(np.pi/4), 0, 0, np.sin(np.pi/4)]  # 90 deg about z
d.qvel[:] = [1.0, 0, 0]
for _ in range(100): mujoco.mj_step(m, d)
mujoco.mj_forward(m, d)
R = np.zeros(9); mujoco.mju_quat2Mat(R, d.qpos); R = R.reshape(3, 3)
print('quat', d.qpos, 'sensor w', d.sensordata[4:7])
R0 = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])
print('R0^T R (local increment)\n', (R0.T @ R).round(4))
print('R R0^T (world increment)\n', (R @ R0.T).round(4))
