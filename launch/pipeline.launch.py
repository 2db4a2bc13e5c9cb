"""A bringup fragment: an IMU stamped on arrival gets jitter-free stamps
(timestamp_estimator), a lidar that stamps with its own clock gets host-time
stamps (clock_sync), and the synchronizer matches the two repaired streams.

    ros2 launch timealign pipeline.launch.py imu:=/imu/data_raw scan:=/scan_raw
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    imu = LaunchConfiguration('imu')
    scan = LaunchConfiguration('scan')
    return LaunchDescription([
        DeclareLaunchArgument('imu', default_value='/imu/data_raw', description='raw IMU topic'),
        DeclareLaunchArgument('scan', default_value='/scan_raw', description='lidar topic stamped with the device clock'),
        DeclareLaunchArgument('namespace', default_value='timealign', description='namespace of the pipeline'),
        Node(
            package='timealign', executable='timestamp_estimator', name='imu_stamps',
            namespace=LaunchConfiguration('namespace'),
            parameters=[{'message_type': 'sensor_msgs/msg/Imu', 'window_sec': 2.0}],
            remappings=[('in', imu), ('out', 'imu')],
            output='screen'),
        Node(
            package='timealign', executable='clock_sync', name='scan_clock',
            namespace=LaunchConfiguration('namespace'),
            parameters=[{'message_type': 'sensor_msgs/msg/LaserScan', 'mode': 'envelope',
                         'when_invalid': 'drop'}],
            remappings=[('in', scan), ('out', 'scan')],
            output='screen'),
        Node(
            package='timealign', executable='synchronizer', name='imu_scan',
            namespace=LaunchConfiguration('namespace'),
            parameters=[{'inputs': 2,
                         'message_types': ['sensor_msgs/msg/Imu', 'sensor_msgs/msg/LaserScan'],
                         'policy': 'approximate', 'queue_size': 50}],
            remappings=[('in0', 'imu'), ('in1', 'scan'), ('out0', 'imu_synced'), ('out1', 'scan_synced')],
            output='screen'),
    ])
