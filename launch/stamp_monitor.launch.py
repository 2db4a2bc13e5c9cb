"""Launch timealign's stamp_monitor on corrected topics against sensor_sim's ground truth."""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('truth', default_value='truth', description="sensor_sim's ground-truth topic"),
        DeclareLaunchArgument('in0', default_value='in0', description='first corrected topic'),
        DeclareLaunchArgument('in1', default_value='in1', description='second corrected topic'),
        DeclareLaunchArgument('namespace', default_value='', description='node namespace'),
        DeclareLaunchArgument(
            'params_file',
            default_value=PathJoinSubstitution([FindPackageShare('timealign'), 'config', 'stamp_monitor.yaml']),
            description='parameter file'),
        Node(
            package='timealign',
            executable='stamp_monitor',
            namespace=LaunchConfiguration('namespace'),
            parameters=[LaunchConfiguration('params_file')],
            remappings=[('truth', LaunchConfiguration('truth')), ('in0', LaunchConfiguration('in0')),
                        ('in1', LaunchConfiguration('in1'))],
            output='screen',
        ),
    ])
