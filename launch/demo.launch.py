"""The live demo: simulated sensors with ground truth, repaired and matched.

sensor_sim publishes an IMU stamped on arrival, a lidar stamped by its own
drifting, wrapping clock, a camera and hardware reference pulses, with every
sample's true acquisition time on `truth`. timestamp_estimator removes the IMU's
jitter (with the pulses), clock_sync maps the lidar's clock to host time, the
synchronizer matches IMU, lidar and camera, and stamp_monitor logs the stamp error
before and after correction every few seconds.

    ros2 launch timealign demo.launch.py
    ros2 launch timealign demo.launch.py namespace:=sim params_file:=my_demo.yaml
    ros2 launch timealign demo.launch.py use_sim_time:=true respawn:=true   # as the soak test runs it
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    ns = LaunchConfiguration('namespace')
    params = [LaunchConfiguration('params_file'), {'use_sim_time': LaunchConfiguration('use_sim_time')}]

    def node(executable, name, remappings):
        return Node(package='timealign', executable=executable, name=name, namespace=ns,
                    parameters=params, remappings=remappings, output='screen',
                    respawn=LaunchConfiguration('respawn'), respawn_delay=1.0)

    return LaunchDescription([
        DeclareLaunchArgument('namespace', default_value='demo', description='namespace of the demo'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare('timealign'), 'config', 'demo.yaml']),
            description='parameter file of the demo nodes'),
        DeclareLaunchArgument('use_sim_time', default_value='false', description='follow /clock'),
        DeclareLaunchArgument('respawn', default_value='false',
                              description='start a node again 1 s after it exits, however it ended'),
        node('sensor_sim', 'sensor_sim', [
            ('imu', 'imu/data_raw'), ('scan', 'scan_raw'), ('image', 'camera/image_raw'),
            ('reference', 'imu/reference'), ('truth', 'truth')]),
        node('timestamp_estimator', 'imu_stamps', [
            ('in', 'imu/data_raw'), ('out', 'imu/data'), ('reference', 'imu/reference')]),
        node('clock_sync', 'scan_clock', [('in', 'scan_raw'), ('out', 'scan')]),
        node('synchronizer', 'sync', [
            ('in0', 'imu/data'), ('in1', 'scan'), ('in2', 'camera/image_raw'),
            ('out0', 'synced/imu'), ('out1', 'synced/scan'), ('out2', 'synced/image')]),
        node('stamp_monitor', 'stamp_monitor', [('truth', 'truth'), ('in0', 'imu/data'), ('in1', 'scan')]),
    ])
